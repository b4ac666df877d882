// Argument checks of lightning_indexer_quant: everything is checked before anything is written.
// The geometry (layouts, shapes, lengths, block table) is lightning_indexer's own checks, with
// this op's name; the dtypes, quant modes and scales are checked here.
#include <cmath>
#include <cstring>
#include <string>

#include "ascend_ops/error.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/convert.h"
#include "host/indexer_cpu.h"
#include "host/liq.h"

namespace aop::lightning_indexer_quant {
namespace {

[[noreturn]] void fail(aop_status status, const std::string& what) {
  throw aop::Error(status, std::string(kOp) + ": " + what);
}

std::string s(int64_t v) { return std::to_string(v); }

bool is_scale_dtype(aop_dtype t) { return t == AOP_DTYPE_FLOAT16 || t == AOP_DTYPE_FLOAT32; }

// A scale tensor: float16 / float32, exactly `want` (the shape of `of` without its last dim(s)),
// contiguous, on query's device, with data.
void expect_scale(const char* name, const aop_tensor& t, const std::vector<int64_t>& want,
                  const std::vector<int64_t>* alt, const std::string& layout, const aop_tensor& query) {
  if (!is_scale_dtype(t.dtype)) {
    fail(AOP_TYPE_ERROR, std::string(name) + " should have dtype float16 or float32 but has " + aop_dtype_name(t.dtype));
  }
  const TensorView v(t);
  if (v.sizes() != want && (alt == nullptr || v.sizes() != *alt)) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should have shape " +
                              TensorView::contiguous(nullptr, want, t.dtype).shape_string() + " (" + layout +
                              ") but has " + v.shape_string());
  }
  if (!v.is_contiguous()) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should be contiguous but has shape " + v.shape_string() +
                              " and strides " + v.strides_string());
  }
  if (t.device.type != query.device.type || t.device.index != query.device.index) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should be on the device of query (" + device_string(query.device) +
                              ") but is on " + device_string(t.device));
  }
  if (v.device().type != AOP_DEVICE_META && v.numel() > 0 && v.data() == nullptr) {
    fail(AOP_VALUE_ERROR, std::string(name) + " has no data");
  }
}

float scale_at(const aop_tensor& t, int64_t i) {
  float f;
  lightning_indexer::to_float(t.dtype, static_cast<const char*>(t.data) + i * aop_dtype_size(t.dtype), 1, &f, 1);
  return f;
}

bool valid_scale(float v) { return std::isfinite(v) && v >= 0.0f; }

std::string value_string(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string out = std::to_string(v);
  return out;
}

// A record's value word: float32 bits, or float16 bits | kLiHalfTag (the kernel's).
int64_t value_word(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return static_cast<int64_t>(bits);
}
float word_value(int64_t w) {
  if (w & kLiHalfTag) return lightning_indexer::fp16_to_float(static_cast<uint16_t>(w & 0xFFFF));
  const auto bits = static_cast<uint32_t>(w);
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

std::string index_list(const std::vector<int64_t>& idx) {
  std::string out = "[";
  for (size_t i = 0; i < idx.size(); ++i) out += (i ? ", " : "") + s(idx[i]);
  return out + "]";
}

// A query-side record's element of weights / query_dequant_scale: [b, s, h] (BSND) or [t, h].
std::string query_index(const int64_t r[kLiCheckWords]) {
  const int64_t row = r[1], h = r[3];
  if (static_cast<Layout>(r[4]) == Layout::kTND) return index_list({row, h});
  return index_list({row / r[5], row % r[5], h});
}

// A key-scale record's element of key_dequant_scale (flat element [4] in the layout [5]).
std::string key_index(const int64_t r[kLiCheckWords]) {
  const int64_t e = r[4], n2 = r[7] & 0xFFFFFFFF, dim1 = r[6];
  std::vector<int64_t> idx;
  if (static_cast<Layout>(r[5]) == Layout::kTND) {
    idx = {e / n2, e % n2};
  } else {
    idx = {e / (dim1 * n2), (e / n2) % dim1, e % n2};
  }
  if (r[7] >> 32) idx.push_back(0);
  return index_list(idx);
}

}  // namespace

aop::Error kernel_error(const int64_t r[kLiCheckWords]) {
  const auto error = [](const std::string& what) { return aop::Error(AOP_VALUE_ERROR, std::string(kOp) + ": " + what); };
  switch (r[0]) {
    case kLiqQueryScaleInvalid:
      return error("query_dequant_scale should be finite and >= 0 but is " + value_string(word_value(r[2])) + " at " +
                   query_index(r));
    case kLiqKeyScaleInvalid:
      return error("key_dequant_scale should be finite and >= 0 for every visible key but is " +
                   value_string(word_value(r[2])) + " at " + key_index(r) + " (key " + s(r[3]) + " of batch " +
                   s(r[1]) + ")");
    case kLiqWeightScaleOverflow: {
      const float w = word_value(r[2]), q = word_value(r[6]);
      return error("weights * query_dequant_scale should be within the float16 range (|w * qs| <= 65504) for the "
                   "AscendC kernel (npu and emu backends) but is " +
                   value_string(w * q) + " at " + query_index(r) + " (weights " + value_string(w) +
                   ", query_dequant_scale " + value_string(q) + ")");
    }
    default:
      return lightning_indexer::kernel_error_as(r, kOp);
  }
}

namespace {

// The record of a query-side error at flat element i of weights / query_dequant_scale.
void throw_query(int64_t code, const Args& a, const Dims& d, int64_t i, float value, float other = 0.0f) {
  const int64_t r[kLiCheckWords] = {code, i / d.heads_q, value_word(value), i % d.heads_q,
                                    static_cast<int64_t>(a.layout_query), d.q_rows, value_word(other), 0};
  throw kernel_error(r);
}

}  // namespace

lightning_indexer::Args geometry(const Args& a) {
  lightning_indexer::Args g;
  g.query = a.query;
  g.key = a.key;
  g.weights = a.weights;
  g.actual_seq_lengths_query = a.actual_seq_lengths_query;
  g.actual_seq_lengths_key = a.actual_seq_lengths_key;
  g.block_table = a.block_table;
  g.layout_query = a.layout_query;
  g.layout_key = a.layout_key;
  g.sparse_count = a.sparse_count;
  g.sparse_mode = a.sparse_mode;
  g.cmp_ratio = 1;
  g.sparse_indices = a.sparse_indices;
  g.sparse_values = a.sparse_values;
  return g;
}

Dims validate(const Args& a, bool check_outputs) {
  if (a.query_quant_mode != 0) {
    fail(AOP_VALUE_ERROR, "query_quant_mode should be 0 (per token and head, symmetric) but is " + s(a.query_quant_mode));
  }
  if (a.key_quant_mode != 0) {
    fail(AOP_VALUE_ERROR, "key_quant_mode should be 0 (per token and head, symmetric) but is " + s(a.key_quant_mode));
  }
  if (a.query.dtype != AOP_DTYPE_INT8) {
    fail(AOP_TYPE_ERROR, std::string("query should have dtype int8 but has ") + aop_dtype_name(a.query.dtype));
  }
  if (a.key.dtype != AOP_DTYPE_INT8) {
    fail(AOP_TYPE_ERROR, std::string("key should have dtype int8 but has ") + aop_dtype_name(a.key.dtype));
  }
  const aop_dtype wt = a.weights.dtype;
  if (wt != AOP_DTYPE_FLOAT16 && wt != AOP_DTYPE_BFLOAT16 && wt != AOP_DTYPE_FLOAT32) {
    fail(AOP_TYPE_ERROR, std::string("weights should have dtype float16, bfloat16 or float32 but has ") +
                             aop_dtype_name(wt));
  }
  const Dims d = lightning_indexer::validate_geometry(geometry(a), kOp, check_outputs);

  const TensorView q(a.query), k(a.key);
  const bool q_tnd = a.layout_query == Layout::kTND;
  std::vector<int64_t> want_qs = q.sizes();
  want_qs.pop_back();  // [B, S1, N1] / [T1, N1]: one per query token and head
  expect_scale("query_dequant_scale", a.query_dequant_scale, want_qs, nullptr,
               q_tnd ? "[T1, N1] from query" : "[B, S1, N1] from query", a.query);
  std::vector<int64_t> want_ks = k.sizes();
  want_ks.pop_back();  // key without D: one per key token and KV head
  std::vector<int64_t> alt_ks = want_ks;
  alt_ks.push_back(1);  // the split scale cache of indexer_k_quant_and_cache
  const bool pa = a.layout_key == Layout::kPA_BSND;
  const std::string ks_layout = pa                                ? "[num_blocks, block_size, N2] or [.., N2, 1] from key"
                                : a.layout_key == Layout::kBSND ? "[B, S2, N2] from key"
                                                                 : "[T2, N2] from key";
  expect_scale("key_dequant_scale", a.key_dequant_scale, want_ks, pa ? &alt_ks : nullptr, ks_layout, a.query);
  return d;
}

void check_data(const Args& a, const Dims& d) {
  const lightning_indexer::Args g = geometry(a);
  lightning_indexer::check_data_as(g, d, kOp);
  const std::vector<lightning_indexer::cpu::Batch> bs = lightning_indexer::cpu::batches(g, d);
  const int64_t N1 = d.heads_q, N2 = d.heads_k;
  for (const auto& x : bs) {  // query scales of the rows in a batch
    for (int64_t i = x.q_begin * N1; i < (x.q_begin + x.q_len) * N1; ++i) {
      const float v = scale_at(a.query_dequant_scale, i);
      if (!valid_scale(v)) throw_query(kLiqQueryScaleInvalid, a, d, i, v);
    }
  }
  const bool pa = a.layout_key == Layout::kPA_BSND;
  const int64_t dim1 = pa ? d.block_size : (a.layout_key == Layout::kBSND ? d.key_rows : 0);
  const int64_t trailing = TensorView(a.key_dequant_scale).ndim() == TensorView(a.key).ndim() ? int64_t{1} << 32 : 0;
  for (int64_t b = 0; b < d.batch; ++b) {  // key scales of the keys some row sees
    const auto& x = bs[static_cast<size_t>(b)];
    const int64_t seen = x.q_len > 0 ? lightning_indexer::cpu::visible_limit(g, x, x.q_len - 1) : 0;
    for (int64_t j = 0; j < seen; ++j) {
      const int64_t row = lightning_indexer::cpu::key_row(g, d, x, b, j);
      for (int64_t h = 0; h < N2; ++h) {
        const float v = scale_at(a.key_dequant_scale, row * N2 + h);
        if (!valid_scale(v)) {
          const int64_t r[kLiCheckWords] = {kLiqKeyScaleInvalid, b,   value_word(v), j, row * N2 + h,
                                            static_cast<int64_t>(a.layout_key), dim1, N2 | trailing};
          throw kernel_error(r);
        }
      }
    }
  }
}

void check_data_kernel(const Args& a, const Dims& d) {
  check_data(a, d);
  const std::vector<lightning_indexer::cpu::Batch> bs = lightning_indexer::cpu::batches(geometry(a), d);
  constexpr float kHalfOverflow = 65520.0f;  // the smallest magnitude float16 rounds to infinity
  for (const auto& x : bs) {
    for (int64_t i = x.q_begin * d.heads_q; i < (x.q_begin + x.q_len) * d.heads_q; ++i) {
      const float w = scale_at(a.weights, i), q = scale_at(a.query_dequant_scale, i);
      if (!(std::fabs(w * q) < kHalfOverflow)) throw_query(kLiqWeightScaleOverflow, a, d, i, w, q);
    }
  }
}

void check_npu_limits(const Args& a, const Dims& d) {
  const std::string where = " for the AscendC kernel (npu and emu backends)";
  if (d.heads_k != 1) fail(AOP_VALUE_ERROR, "key should have N2 = 1" + where + " but has N2 = " + s(d.heads_k));
  if (d.head_dim != 128) fail(AOP_VALUE_ERROR, "query should have D = 128" + where + " but has D = " + s(d.head_dim));
  if (d.heads_q > 64) fail(AOP_VALUE_ERROR, "query should have N1 <= 64" + where + " but has N1 = " + s(d.heads_q));
  if (a.layout_key == Layout::kPA_BSND && (d.block_size % 16 != 0 || d.block_size > 1024)) {
    fail(AOP_VALUE_ERROR, "key should have a block_size that is a multiple of 16 and <= 1024" + where + " but has " +
                              s(d.block_size));
  }
  if (a.sparse_count > kMaxSparseCountNpu) {
    fail(AOP_VALUE_ERROR, "sparse_count should be in [1, " + s(kMaxSparseCountNpu) + "]" + where + " but is " +
                              s(a.sparse_count));
  }
  const auto f16 = [&](const char* name, aop_dtype t) {
    if (t != AOP_DTYPE_FLOAT16) {
      fail(AOP_TYPE_ERROR, std::string(name) + " should have dtype float16" + where + " but has " + aop_dtype_name(t));
    }
  };
  f16("weights", a.weights.dtype);
  f16("query_dequant_scale", a.query_dequant_scale.dtype);
  f16("key_dequant_scale", a.key_dequant_scale.dtype);
}

}  // namespace aop::lightning_indexer_quant
