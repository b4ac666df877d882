// Argument checks of sparse_flash_attention: everything is checked before anything is written.
// Shapes are compared whole against the layout's expected shape, so every message shows both.
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "ascend_ops/error.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/sparse_flash_attention.h"

namespace aop::sparse_flash_attention {
namespace {

constexpr const char* kOp = "sparse_flash_attention";
constexpr int64_t kAny = -1;  // a dimension the shape check leaves free

[[noreturn]] void fail(aop_status status, const std::string& what) {
  throw aop::Error(status, std::string(kOp) + ": " + what);
}

std::string s(int64_t v) { return std::to_string(v); }

// A layout's expected shape with its dimension names, e.g. {"B", B}, {"S1", kAny}.
using Shape = std::vector<std::pair<const char*, int64_t>>;

std::string shape_text(const Shape& want) {
  std::string text = "[";
  for (size_t i = 0; i < want.size(); ++i) {
    if (i > 0) text += ", ";
    text += want[i].second == kAny ? want[i].first : std::string(want[i].first) + "=" + s(want[i].second);
  }
  return text + "]";
}

void expect_shape(const char* name, const TensorView& t, const std::string& layout, const Shape& want) {
  bool ok = t.ndim() == static_cast<int>(want.size());
  for (size_t i = 0; ok && i < want.size(); ++i) ok = want[i].second == kAny || t.dim(static_cast<int>(i)) == want[i].second;
  if (!ok) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should be " + (layout.empty() ? "" : layout + " ") + shape_text(want) +
                              " but has shape " + t.shape_string());
  }
}

void expect_dtype(const char* name, const aop_tensor& t, std::initializer_list<aop_dtype> allowed, const char* why) {
  for (aop_dtype d : allowed) {
    if (t.dtype == d) return;
  }
  fail(AOP_TYPE_ERROR, std::string(name) + " should have dtype " + why + " but has " + aop_dtype_name(t.dtype));
}

// The common checks of every tensor argument: the query's device, data present, and contiguity
// of all dimensions (or of the last `contiguous_dims`, for a paged cache whose blocks may be
// spaced further apart).
void expect_placed(const char* name, const aop_tensor& t, const aop_tensor& query, int contiguous_dims = -1) {
  const TensorView v(t);
  if (t.device.type != query.device.type || t.device.index != query.device.index) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should be on the device of query (" + device_string(query.device) +
                              ") but is on " + device_string(t.device));
  }
  const bool contiguous = contiguous_dims < 0 ? v.is_contiguous() : v.last_dims_contiguous(contiguous_dims);
  if (!contiguous) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should be " +
                              (contiguous_dims < 0 ? "contiguous" : "contiguous in its last three dimensions") +
                              " but has shape " + v.shape_string() + " and strides " + v.strides_string());
  }
  if (t.device.type != AOP_DEVICE_META && v.numel() > 0 && t.data == nullptr) {
    fail(AOP_VALUE_ERROR, std::string(name) + " has no data");
  }
}

// A [B] lengths tensor.
void expect_lengths(const char* name, const std::optional<aop_tensor>& t, bool required, int64_t batch,
                    const char* what, const aop_tensor& query) {
  if (!t) {
    if (required) fail(AOP_VALUE_ERROR, std::string(name) + " is required: " + what);
    return;
  }
  expect_dtype(name, *t, {AOP_DTYPE_INT32, AOP_DTYPE_INT64}, "int32 (int64 on the cpu backend)");
  expect_shape(name, TensorView(*t), "", {{"B", batch}});
  expect_placed(name, *t, query);
}

bool same_view(const aop_tensor& a, const aop_tensor& b) {
  if (a.data != b.data || a.ndim != b.ndim || a.dtype != b.dtype) return false;
  for (int i = 0; i < a.ndim; ++i) {
    if (a.shape[i] != b.shape[i] || a.strides[i] != b.strides[i]) return false;
  }
  return true;
}

// The key-side tensors (key, value, key_rope) of one layout: their expected shape for `width`
// columns (D or Dr).
Shape kv_shape(Layout layout, const Dims& d, const char* width_name, int64_t width) {
  switch (layout) {
    case Layout::kPA_BSND:
      return {{"num_blocks", d.num_blocks}, {"block_size", d.block_size}, {"N2", 1}, {width_name, width}};
    case Layout::kBSND: return {{"B", d.batch}, {"S2", d.key_rows}, {"N2", 1}, {width_name, width}};
    case Layout::kTND: return {{"T2", d.key_rows}, {"N2", 1}, {width_name, width}};
  }
  return {};
}

}  // namespace

Dims validate(const Args& a, bool check_outputs) {
  // Attributes first: they decide how the tensors are read.
  if (a.layout_query != Layout::kBSND && a.layout_query != Layout::kTND) {
    fail(AOP_VALUE_ERROR, "layout_query should be 'BSND' or 'TND'");
  }
  if (a.layout_kv != Layout::kPA_BSND && a.layout_kv != a.layout_query) {
    fail(AOP_VALUE_ERROR, std::string("layout_kv '") + layout_name(a.layout_kv) +
                              "' needs layout_query to be the same layout but layout_query is '" +
                              layout_name(a.layout_query) + "' (only 'PA_BSND' combines with either)");
  }
  if (a.sparse_mode != 0 && a.sparse_mode != 3) {
    fail(AOP_VALUE_ERROR, "sparse_mode should be 0 (every key up to act_kv) or 3 (causal, aligned to the end) but is " +
                              s(a.sparse_mode));
  }
  if (a.attention_mode != 2) {
    fail(AOP_VALUE_ERROR, "attention_mode should be 2 (MLA-absorbed: key and value are the latent) but is " +
                              s(a.attention_mode));
  }
  if (a.pre_tokens != kDefaultTokens || a.next_tokens != kDefaultTokens) {
    fail(AOP_VALUE_ERROR, "pre_tokens and next_tokens should be the default 9223372036854775807 (no band) but are " +
                              s(a.pre_tokens) + " and " + s(a.next_tokens));
  }
  if (a.sparse_block_size < 1) fail(AOP_VALUE_ERROR, "sparse_block_size should be >= 1 but is " + s(a.sparse_block_size));

  const aop_dtype dtype = a.query.dtype;
  expect_dtype("query", a.query, {AOP_DTYPE_FLOAT16, AOP_DTYPE_BFLOAT16, AOP_DTYPE_FLOAT32},
               "float16, bfloat16 or float32 (cpu)");
  if (!a.query_rope) fail(AOP_VALUE_ERROR, "query_rope is required (MLA: the query's rope columns)");
  if (!a.key_rope) fail(AOP_VALUE_ERROR, "key_rope is required (MLA: the cached keys' rope columns)");
  const std::string same = std::string(aop_dtype_name(dtype)) + " (the dtype of query)";
  for (const auto& [name, t] : {std::pair<const char*, const aop_tensor*>{"key", &a.key}, {"value", &a.value},
                                {"query_rope", &*a.query_rope}, {"key_rope", &*a.key_rope}}) {
    expect_dtype(name, *t, {dtype}, same.c_str());
  }
  expect_dtype("sparse_indices", a.sparse_indices, {AOP_DTYPE_INT32}, "int32");

  const TensorView q(a.query), k(a.key), qr(*a.query_rope), idx(a.sparse_indices);
  const bool q_tnd = a.layout_query == Layout::kTND;
  const std::string q_layout = q_tnd ? "TND" : "BSND";
  expect_shape("query", q, q_layout, q_tnd ? Shape{{"T1", kAny}, {"N1", kAny}, {"D", kAny}}
                                           : Shape{{"B", kAny}, {"S1", kAny}, {"N1", kAny}, {"D", kAny}});
  Dims d{};
  d.heads_q = q.dim(-2);
  d.head_dim = q.dim(-1);
  d.q_rows = q_tnd ? q.dim(0) : q.dim(1);
  d.heads_kv = 1;
  if (d.heads_q < 1 || d.head_dim < 1) {
    fail(AOP_VALUE_ERROR, "query should have N1 >= 1 and D >= 1 but has shape " + q.shape_string());
  }
  if (q_tnd) {
    expect_lengths("actual_seq_lengths_query", a.actual_seq_lengths_query, true, kAny,
                   "with layout_query 'TND' it holds the cumulative ends of the batches' rows [B]", a.query);
    d.batch = a.actual_seq_lengths_query->shape[0];
  } else {
    d.batch = q.dim(0);
    expect_lengths("actual_seq_lengths_query", a.actual_seq_lengths_query, false, d.batch, "", a.query);
  }
  if (qr.ndim() != q.ndim()) {
    fail(AOP_VALUE_ERROR, "query_rope should be " + q_layout + " like query (rank " + s(q.ndim()) + ") but has shape " +
                              qr.shape_string());
  }
  d.rope_dim = qr.dim(-1);
  expect_shape("query_rope", qr, q_layout,
               q_tnd ? Shape{{"T1", d.q_rows}, {"N1", d.heads_q}, {"Dr", kAny}}
                     : Shape{{"B", d.batch}, {"S1", d.q_rows}, {"N1", d.heads_q}, {"Dr", kAny}});

  // The key side: its sizes from key, then value and key_rope against them.
  const char* kv_layout = layout_name(a.layout_kv);
  switch (a.layout_kv) {
    case Layout::kPA_BSND:
      expect_shape("key", k, kv_layout, {{"num_blocks", kAny}, {"block_size", kAny}, {"N2", kAny}, {"D", kAny}});
      if (!a.block_table) fail(AOP_VALUE_ERROR, "block_table is required with layout_kv 'PA_BSND'");
      expect_dtype("block_table", *a.block_table, {AOP_DTYPE_INT32, AOP_DTYPE_INT64}, "int32 (int64 on the cpu backend)");
      expect_shape("block_table", TensorView(*a.block_table), "", {{"B", d.batch}, {"max_blocks", kAny}});
      expect_placed("block_table", *a.block_table, a.query);
      expect_lengths("actual_seq_lengths_kv", a.actual_seq_lengths_kv, true, d.batch,
                     "with layout_kv 'PA_BSND' it holds each batch's key count [B]", a.query);
      d.num_blocks = k.dim(0);
      d.block_size = k.dim(1);
      d.max_blocks = a.block_table->shape[1];
      d.key_rows = d.num_blocks * d.block_size;
      if (d.block_size < 1) fail(AOP_VALUE_ERROR, "key should have block_size >= 1 but has shape " + k.shape_string());
      break;
    case Layout::kBSND:
      expect_shape("key", k, kv_layout, {{"B", d.batch}, {"S2", kAny}, {"N2", kAny}, {"D", kAny}});
      expect_lengths("actual_seq_lengths_kv", a.actual_seq_lengths_kv, false, d.batch, "", a.query);
      d.key_rows = k.dim(1);
      break;
    case Layout::kTND:
      expect_shape("key", k, kv_layout, {{"T2", kAny}, {"N2", kAny}, {"D", kAny}});
      expect_lengths("actual_seq_lengths_kv", a.actual_seq_lengths_kv, true, d.batch,
                     "with layout_kv 'TND' it holds the cumulative ends of the batches' keys [B]", a.query);
      d.key_rows = k.dim(0);
      break;
  }
  if (a.layout_kv != Layout::kPA_BSND && a.block_table) {
    fail(AOP_VALUE_ERROR, std::string("block_table is only for layout_kv 'PA_BSND' but layout_kv is '") + kv_layout + "'");
  }
  expect_shape("key", k, kv_layout, kv_shape(a.layout_kv, d, "D", d.head_dim));
  expect_shape("value", TensorView(a.value), kv_layout, kv_shape(a.layout_kv, d, "D", d.head_dim));
  expect_shape("key_rope", TensorView(*a.key_rope), kv_layout, kv_shape(a.layout_kv, d, "Dr", d.rope_dim));
  expect_shape("sparse_indices", idx, "", q_tnd ? Shape{{"T1", d.q_rows}, {"N2", 1}, {"K", kAny}}
                                                : Shape{{"B", d.batch}, {"S1", d.q_rows}, {"N2", 1}, {"K", kAny}});
  d.topk = idx.dim(-1);
  if (d.topk < 1) fail(AOP_VALUE_ERROR, "sparse_indices should have K >= 1 entries per row but has shape " + idx.shape_string());

  // Paged caches may be views whose blocks are further apart (one [2, num_blocks, ...] tensor).
  const int kv_contiguous = a.layout_kv == Layout::kPA_BSND ? 3 : -1;
  expect_placed("query", a.query, a.query);
  expect_placed("query_rope", *a.query_rope, a.query);
  expect_placed("sparse_indices", a.sparse_indices, a.query);
  expect_placed("key", a.key, a.query, kv_contiguous);
  expect_placed("key_rope", *a.key_rope, a.query, kv_contiguous);
  expect_placed("value", a.value, a.query, kv_contiguous);
  if (a.layout_kv == Layout::kPA_BSND && a.value.strides[0] != a.key.strides[0]) {
    fail(AOP_VALUE_ERROR, "value should have the block stride of key (" + s(a.key.strides[0]) + ") but has strides " +
                              TensorView(a.value).strides_string());
  }
  d.kv_block_stride = a.layout_kv == Layout::kPA_BSND ? k.stride(0) : d.head_dim;
  d.rope_block_stride = a.layout_kv == Layout::kPA_BSND ? a.key_rope->strides[0] : d.rope_dim;
  d.value_is_key = same_view(a.value, a.key);

  if (check_outputs) {
    const auto expect_out = [&](const char* name, const aop_tensor& t, aop_dtype dt, const Shape& want) {
      expect_dtype(name, t, {dt}, aop_dtype_name(dt));
      expect_shape(name, TensorView(t), "", want);
      expect_placed(name, t, a.query);
    };
    expect_out("attention_out", a.attention_out, dtype,
               q_tnd ? Shape{{"T1", d.q_rows}, {"N1", d.heads_q}, {"D", d.head_dim}}
                     : Shape{{"B", d.batch}, {"S1", d.q_rows}, {"N1", d.heads_q}, {"D", d.head_dim}});
    const Shape lse = q_tnd ? Shape{{"N2", 1}, {"T1", d.q_rows}, {"G", d.heads_q}}
                            : Shape{{"B", d.batch}, {"N2", 1}, {"S1", d.q_rows}, {"G", d.heads_q}};
    if (a.softmax_max.has_value() != a.softmax_sum.has_value()) {
      fail(AOP_VALUE_ERROR, "softmax_max and softmax_sum should both be given or both be absent");
    }
    if (a.softmax_max) {
      expect_out("softmax_max", *a.softmax_max, AOP_DTYPE_FLOAT32, lse);
      expect_out("softmax_sum", *a.softmax_sum, AOP_DTYPE_FLOAT32, lse);
    }
  }
  return d;
}

void check_npu_limits(const Args& a, const Dims& d) {
  const std::string where = " for the AscendC kernel (npu and emu backends)";
  if (a.query.dtype == AOP_DTYPE_FLOAT32) {
    fail(AOP_TYPE_ERROR, "query should have dtype float16 or bfloat16" + where +
                             " but has float32 (the cube takes 16-bit inputs; use the cpu backend)");
  }
  for (const auto& [name, t] : {std::pair<const char*, const std::optional<aop_tensor>*>{"block_table", &a.block_table},
                                {"actual_seq_lengths_query", &a.actual_seq_lengths_query},
                                {"actual_seq_lengths_kv", &a.actual_seq_lengths_kv}}) {
    if (*t && (*t)->dtype != AOP_DTYPE_INT32) {
      fail(AOP_TYPE_ERROR, std::string(name) + " should have dtype int32" + where + " but has " +
                               aop_dtype_name((*t)->dtype));
    }
  }
  if (d.head_dim != 512) fail(AOP_VALUE_ERROR, "query should have D = 512" + where + " but has D = " + s(d.head_dim));
  if (d.rope_dim != 64) fail(AOP_VALUE_ERROR, "query_rope should have Dr = 64" + where + " but has Dr = " + s(d.rope_dim));
  const int64_t n1 = d.heads_q;
  if (n1 > 128 || (n1 & (n1 - 1)) != 0) {
    fail(AOP_VALUE_ERROR, "query should have N1 in {1, 2, 4, ..., 128}" + where + " but has N1 = " + s(n1));
  }
  const int64_t sbs = a.sparse_block_size;
  if (sbs > 128 || (sbs & (sbs - 1)) != 0) {
    fail(AOP_VALUE_ERROR, "sparse_block_size should be a power of two in [1, 128]" + where + " but is " + s(sbs));
  }
  if (a.layout_kv == Layout::kPA_BSND) {
    if (d.block_size % 16 != 0 || d.block_size > 1024) {
      fail(AOP_VALUE_ERROR, "key should have a block_size that is a multiple of 16 and <= 1024" + where + " but has " +
                                s(d.block_size));
    }
    if (d.block_size % sbs != 0) {
      fail(AOP_VALUE_ERROR, "sparse_block_size should divide block_size = " + s(d.block_size) + where + " but is " +
                                s(sbs));
    }
  }
}

}  // namespace aop::sparse_flash_attention
