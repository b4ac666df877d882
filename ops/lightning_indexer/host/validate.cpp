// Argument checks of lightning_indexer: everything is checked before anything is written.
#include <string>

#include "ascend_ops/error.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/lightning_indexer.h"

namespace aop::lightning_indexer {
namespace {

// The op whose messages these checks give: lightning_indexer, or lightning_indexer_quant, which
// shares them (validate_geometry, check_data_as); a scope sets it for one call rather than
// threading a name through every helper.
thread_local const char* t_op = "lightning_indexer";

struct OpScope {
  explicit OpScope(const char* op) : saved(t_op) { t_op = op; }
  ~OpScope() { t_op = saved; }
  const char* saved;
};

[[noreturn]] void fail(aop_status status, const std::string& what) {
  throw aop::Error(status, std::string(t_op) + ": " + what);
}

std::string s(int64_t v) { return std::to_string(v); }

void expect_rank(const char* name, const TensorView& t, int rank, const std::string& layout) {
  if (t.ndim() != rank) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should be " + layout + " (rank " + s(rank) +
                              ") but has shape " + t.shape_string());
  }
}

void expect_dim(const char* name, const TensorView& t, int dim, int64_t want, const std::string& layout,
                const char* what) {
  if (t.dim(dim) != want) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should be " + layout + " with " + what + " = " + s(want) +
                              " but has shape " + t.shape_string());
  }
}

void expect_contiguous(const char* name, const TensorView& t) {
  if (!t.is_contiguous()) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should be contiguous but has shape " + t.shape_string() +
                              " and strides " + t.strides_string());
  }
}

// A paged key as caches are allocated: each block [block_size, N2, D] packed, blocks apart by
// any stride(0) that keeps them from overlapping (the K half of a [num_blocks, 2, ...] KV cache,
// a view of a larger pool).
void expect_paged_key(const TensorView& k) {
  const int64_t block = k.dim(1) * k.dim(2) * k.dim(3);
  if (!k.last_dims_contiguous(3) || (k.dim(0) > 1 && block > 0 && k.stride(0) < block)) {
    fail(AOP_VALUE_ERROR, "key should have each cache block [block_size, N2, D] contiguous and blocks that do not "
                          "overlap (stride(0) >= block_size * N2 * D = " + s(block) + ") but has shape " +
                              k.shape_string() + " and strides " + k.strides_string());
  }
}

void expect_same_device(const char* name, const aop_tensor& t, const aop_tensor& query) {
  if (t.device.type != query.device.type || t.device.index != query.device.index) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should be on the device of query (" + device_string(query.device) +
                              ") but is on " + device_string(t.device));
  }
}

void expect_data(const char* name, const TensorView& t) {
  if (t.device().type != AOP_DEVICE_META && t.numel() > 0 && t.data() == nullptr) {
    fail(AOP_VALUE_ERROR, std::string(name) + " has no data");
  }
}

void expect_index_dtype(const char* name, const aop_tensor& t) {
  if (t.dtype != AOP_DTYPE_INT32 && t.dtype != AOP_DTYPE_INT64) {
    fail(AOP_TYPE_ERROR, std::string(name) + " should have dtype int32 or int64 but has " + aop_dtype_name(t.dtype));
  }
}

// A [B] lengths tensor: present when required, rank 1, B entries, an index dtype.
void expect_lengths(const char* name, const std::optional<aop_tensor>& t, bool required, int64_t batch,
                    const char* what, const aop_tensor& query) {
  if (!t) {
    if (required) fail(AOP_VALUE_ERROR, std::string(name) + " is required: " + what);
    return;
  }
  expect_index_dtype(name, *t);
  const TensorView v(*t);
  expect_rank(name, v, 1, "[B]");
  if (batch >= 0) expect_dim(name, v, 0, batch, "[B]", "B");
  expect_contiguous(name, v);
  expect_same_device(name, *t, query);
  expect_data(name, v);
}

}  // namespace

std::vector<int64_t> output_shape(const Args& a) {
  const TensorView q(a.query), k(a.key);
  const int64_t n2 = k.dim(-2);
  if (a.layout_query == Layout::kTND) return {q.dim(0), n2, a.sparse_count};
  return {q.dim(0), q.dim(1), n2, a.sparse_count};
}

Dims validate(const Args& a, bool check_outputs) {
  const aop_dtype dtype = a.query.dtype;
  if (dtype != AOP_DTYPE_FLOAT16 && dtype != AOP_DTYPE_BFLOAT16 && dtype != AOP_DTYPE_FLOAT32) {
    fail(AOP_TYPE_ERROR, std::string("query should have dtype float16, bfloat16 or float32 but has ") +
                             aop_dtype_name(dtype));
  }
  if (a.key.dtype != dtype) {
    fail(AOP_TYPE_ERROR, std::string("key should have dtype ") + aop_dtype_name(dtype) + " (the dtype of query) but has " +
                             aop_dtype_name(a.key.dtype));
  }
  if (a.weights.dtype != dtype && a.weights.dtype != AOP_DTYPE_FLOAT32) {
    fail(AOP_TYPE_ERROR, std::string("weights should have dtype ") + aop_dtype_name(dtype) +
                             " (the dtype of query) or float32 but has " + aop_dtype_name(a.weights.dtype));
  }
  return validate_geometry(a, "lightning_indexer", check_outputs);
}

Dims validate_geometry(const Args& a, const char* op, bool check_outputs) {
  const OpScope scope(op);
  if (a.layout_query != Layout::kBSND && a.layout_query != Layout::kTND) {
    fail(AOP_VALUE_ERROR, "layout_query should be 'BSND' or 'TND'");
  }
  if (a.sparse_mode != 0 && a.sparse_mode != 3) {
    fail(AOP_VALUE_ERROR, "sparse_mode should be 0 (no mask) or 3 (causal, aligned to the end) but is " +
                              s(a.sparse_mode));
  }
  if (a.sparse_count < 1 || a.sparse_count > kMaxSparseCount) {
    fail(AOP_VALUE_ERROR, "sparse_count should be in [1, " + s(kMaxSparseCount) + "] but is " + s(a.sparse_count));
  }
  if (a.cmp_ratio < 1 || a.cmp_ratio > kLiMaxCmpRatio) {
    fail(AOP_VALUE_ERROR, "cmp_ratio should be in [1, " + s(kLiMaxCmpRatio) + "] but is " + s(a.cmp_ratio));
  }

  const TensorView q(a.query), k(a.key), w(a.weights);
  const bool q_tnd = a.layout_query == Layout::kTND;
  const std::string q_layout = q_tnd ? "TND [T1, N1, D]" : "BSND [B, S1, N1, D]";
  expect_rank("query", q, q_tnd ? 3 : 4, q_layout);
  Dims d{};
  d.heads_q = q.dim(-2);
  d.head_dim = q.dim(-1);
  d.q_rows = q_tnd ? q.dim(0) : q.dim(1);
  if (d.heads_q < 1 || d.head_dim < 1) {
    fail(AOP_VALUE_ERROR, "query should have N1 >= 1 and D >= 1 but has shape " + q.shape_string());
  }

  // B: from the query (BSND) or from its cumulative ends (TND).
  if (q_tnd) {
    expect_lengths("actual_seq_lengths_query", a.actual_seq_lengths_query, true, -1,
                   "with layout_query 'TND' it holds the cumulative ends of the batches' rows [B]", a.query);
    d.batch = a.actual_seq_lengths_query->shape[0];
  } else {
    d.batch = q.dim(0);
    expect_lengths("actual_seq_lengths_query", a.actual_seq_lengths_query, false, d.batch, "", a.query);
  }

  // weights may carry a trailing 1 ([T1, N1, 1] / [B, S1, N1, 1], as vllm-ascend and ms_custom_ops
  // pass them): the same contiguous bytes.
  const int w_rank = q_tnd ? 2 : 3;
  const std::string w_layout = q_tnd ? "[T1, N1] or [T1, N1, 1]" : "[B, S1, N1] or [B, S1, N1, 1]";
  if (w.ndim() != w_rank && !(w.ndim() == w_rank + 1 && w.dim(-1) == 1)) {
    fail(AOP_VALUE_ERROR, "weights should be " + w_layout + " but has shape " + w.shape_string());
  }
  static const char* const kBsndWhat[] = {"B (from query)", "S1 (from query)", "N1 (from query)"};
  static const char* const kTndWhat[] = {"T1 (from query)", "N1 (from query)"};
  for (int i = 0; i < w_rank; ++i) {
    expect_dim("weights", w, i, q.dim(i), w_layout, q_tnd ? kTndWhat[i] : kBsndWhat[i]);
  }

  switch (a.layout_key) {
    case Layout::kPA_BSND: {
      const std::string layout = "PA_BSND [num_blocks, block_size, N2, D]";
      expect_rank("key", k, 4, layout);
      if (!a.block_table) fail(AOP_VALUE_ERROR, "block_table is required with layout_key 'PA_BSND'");
      expect_index_dtype("block_table", *a.block_table);
      const TensorView bt(*a.block_table);
      expect_rank("block_table", bt, 2, "[B, max_blocks]");
      expect_dim("block_table", bt, 0, d.batch, "[B, max_blocks]", "B");
      expect_contiguous("block_table", bt);
      expect_same_device("block_table", *a.block_table, a.query);
      expect_data("block_table", bt);
      expect_lengths("actual_seq_lengths_key", a.actual_seq_lengths_key, true, d.batch,
                     "with layout_key 'PA_BSND' it holds each batch's key count [B]", a.query);
      d.num_blocks = k.dim(0);
      d.block_size = k.dim(1);
      d.max_blocks = bt.dim(1);
      d.key_rows = d.num_blocks * d.block_size;
      if (d.block_size < 1) fail(AOP_VALUE_ERROR, "key should have block_size >= 1 but has shape " + k.shape_string());
      expect_paged_key(k);
      d.key_block_stride = d.num_blocks > 1 ? k.stride(0) : d.block_size * k.dim(2) * k.dim(3);
      break;
    }
    case Layout::kBSND: {
      const std::string layout = "BSND [B, S2, N2, D]";
      expect_rank("key", k, 4, layout);
      expect_dim("key", k, 0, d.batch, layout, "B (from query)");
      expect_lengths("actual_seq_lengths_key", a.actual_seq_lengths_key, false, d.batch, "", a.query);
      d.key_rows = k.dim(1);
      break;
    }
    case Layout::kTND: {
      expect_rank("key", k, 3, "TND [T2, N2, D]");
      expect_lengths("actual_seq_lengths_key", a.actual_seq_lengths_key, true, d.batch,
                     "with layout_key 'TND' it holds the cumulative ends of the batches' keys [B]", a.query);
      d.key_rows = k.dim(0);
      break;
    }
    default:
      fail(AOP_VALUE_ERROR, "layout_key should be 'PA_BSND', 'BSND' or 'TND'");
  }
  if (a.layout_key != Layout::kPA_BSND && a.block_table) {
    fail(AOP_VALUE_ERROR, std::string("block_table is only for layout_key 'PA_BSND' but layout_key is '") +
                              layout_name(a.layout_key) + "'");
  }
  // cmp_residual_k: the original key lengths mod cmp_ratio; only with compressed keys, and needed
  // by the causal rule (sparse_mode 3) there.
  if (a.cmp_residual_k && a.cmp_ratio == 1) {
    fail(AOP_VALUE_ERROR, "cmp_residual_k is only for cmp_ratio > 1 (compressed keys) but cmp_ratio is 1: pass None");
  }
  expect_lengths("cmp_residual_k", a.cmp_residual_k, a.cmp_ratio > 1 && a.sparse_mode == 3, d.batch,
                 ("with cmp_ratio " + s(a.cmp_ratio) +
                  " > 1 and sparse_mode 3 it holds each batch's original key length mod cmp_ratio [B]").c_str(),
                 a.query);
  const std::string k_layout = std::string(layout_name(a.layout_key)) + " key";
  expect_dim("key", k, -1, d.head_dim, k_layout, "D (from query)");
  d.heads_k = k.dim(-2);
  if (d.heads_k < 1 || d.heads_q % d.heads_k != 0) {
    fail(AOP_VALUE_ERROR, "key should have N2 >= 1 dividing N1 = " + s(d.heads_q) + " (from query) but has shape " +
                              k.shape_string());
  }

  expect_contiguous("query", q);
  if (a.layout_key != Layout::kPA_BSND) expect_contiguous("key", k);
  expect_contiguous("weights", w);
  expect_same_device("key", a.key, a.query);
  expect_same_device("weights", a.weights, a.query);
  expect_data("query", q);
  expect_data("key", k);
  expect_data("weights", w);

  if (check_outputs) {
    const std::vector<int64_t> want = output_shape(a);
    const auto expect_out = [&](const char* name, const aop_tensor& t, aop_dtype dt) {
      if (t.dtype != dt) {
        fail(AOP_TYPE_ERROR, std::string(name) + " should have dtype " + aop_dtype_name(dt) + " but has " +
                                 aop_dtype_name(t.dtype));
      }
      const TensorView v(t);
      if (v.sizes() != want) {
        const TensorView expected = TensorView::contiguous(nullptr, want, dt);
        fail(AOP_VALUE_ERROR, std::string(name) + " should have shape " + expected.shape_string() + " but has " +
                                  v.shape_string());
      }
      expect_contiguous(name, v);
      expect_same_device(name, t, a.query);
      expect_data(name, v);
    };
    expect_out("sparse_indices", a.sparse_indices, AOP_DTYPE_INT32);
    if (a.sparse_values) expect_out("sparse_values", *a.sparse_values, AOP_DTYPE_FLOAT32);
  }
  return d;
}

void check_data(const Args& a, const Dims& d) { check_data_as(a, d, "lightning_indexer"); }

void check_data_as(const Args& a, const Dims& d, const char* op) {
  const OpScope scope(op);
  // Each failure is thrown through kernel_error, which builds the message of the kernel's record too.
  const auto fail_record = [](int64_t code, int64_t b, int64_t value, int64_t aux, int64_t c4, int64_t c5 = 0,
                              int64_t c6 = 0) {
    const int64_t record[kLiCheckWords] = {code, b, value, aux, c4, c5, c6, 0};
    throw kernel_error(record);
  };
  // codes[0..2]: negative, below the previous end, beyond the limit (common's scan).
  const auto check_lengths = [&](const aop_tensor& t, const int64_t* codes, bool cumulative, int64_t limit,
                                 Layout layout) {
    const seq::LengthCheck c = seq::first_length_fault(t, d.batch, cumulative, limit);
    if (c.fault != seq::LengthFault::kNone) {
      fail_record(codes[static_cast<int>(c.fault)], c.batch, c.value, c.aux, static_cast<int64_t>(layout));
    }
  };
  static constexpr int64_t kQ[3] = {kLiLenQNegative, kLiLenQBelowPrevious, kLiLenQBeyond};
  static constexpr int64_t kK[3] = {kLiLenKNegative, kLiLenKBelowPrevious, kLiLenKBeyond};
  if (a.actual_seq_lengths_query) {
    check_lengths(*a.actual_seq_lengths_query, kQ, a.layout_query == Layout::kTND, d.q_rows, a.layout_query);
  }
  if (a.actual_seq_lengths_key) {
    const int64_t limit = a.layout_key == Layout::kPA_BSND ? d.max_blocks * d.block_size : d.key_rows;
    check_lengths(*a.actual_seq_lengths_key, kK, a.layout_key == Layout::kTND, limit, a.layout_key);
  }
  if (a.layout_key == Layout::kPA_BSND) {
    for (int64_t b = 0; b < d.batch; ++b) {
      const int64_t len = read_index(*a.actual_seq_lengths_key, b);
      const int64_t i = seq::first_bad_block(*a.block_table, b, d.max_blocks, len, d.block_size, d.num_blocks);
      if (i >= 0) {
        fail_record(kLiBlockIdOutOfRange, b, read_index(*a.block_table, b * d.max_blocks + i), i, d.num_blocks, len,
                    d.block_size);
      }
    }
  }
  if (a.cmp_residual_k) {  // last: a phase of its own in the kernel too
    for (int64_t b = 0; b < d.batch; ++b) {
      const int64_t v = read_index(*a.cmp_residual_k, b);
      if (!LiResidualValid(v, a.cmp_ratio)) fail_record(kLiResidualOutOfRange, b, v, a.cmp_ratio, 0);
    }
  }
}

aop::Error kernel_error(const int64_t record[kLiCheckWords]) {
  const int64_t code = record[0], b = record[1], v = record[2], aux = record[3];
  const auto message = [](const std::string& what) { return std::string(t_op) + ": " + what; };
  if (code >= kLiLenQNegative && code <= kLiLenKBeyond) {
    const bool query = code <= kLiLenQBeyond;
    const auto fault = static_cast<seq::LengthFault>((code - kLiLenQNegative) % 3);
    const char* arg = query ? "actual_seq_lengths_query" : "actual_seq_lengths_key";
    const char* limit = seq::length_limit_name(query, static_cast<Layout>(record[4]));
    return aop::Error(AOP_VALUE_ERROR, message(seq::length_message(arg, fault, b, v, aux, limit)));
  }
  if (code == kLiBlockIdOutOfRange) {
    return aop::Error(AOP_INDEX_ERROR, message(seq::block_id_message(b, aux, v, record[4], record[5], record[6])));
  }
  if (code == kLiResidualOutOfRange) {
    return aop::Error(AOP_VALUE_ERROR, message("cmp_residual_k[" + s(b) + "] = " + s(v) +
                                               " is out of range: it should be in [0, cmp_ratio = " + s(aux) +
                                               ") (the batch's original key length mod cmp_ratio)"));
  }
  return aop::Error(AOP_RUNTIME_ERROR, message("internal: unknown kernel error code " + s(code)));
}

aop::Error kernel_error_as(const int64_t record[kLiCheckWords], const char* op) {
  const OpScope scope(op);
  return kernel_error(record);
}

void check_npu_limits(const Args& a, const Dims& d) {
  const std::string where = " for the AscendC kernel (npu and emu backends)";
  if (a.query.dtype == AOP_DTYPE_FLOAT32) {
    fail(AOP_TYPE_ERROR, "query should have dtype float16 or bfloat16" + where +
                             " but has float32 (the matrix path takes 16-bit inputs; use the cpu backend)");
  }
  if (d.heads_k != 1) fail(AOP_VALUE_ERROR, "key should have N2 = 1" + where + " but has N2 = " + s(d.heads_k));
  if (d.head_dim != 128) fail(AOP_VALUE_ERROR, "query should have D = 128" + where + " but has D = " + s(d.head_dim));
  if (d.heads_q > 64) fail(AOP_VALUE_ERROR, "query should have N1 <= 64" + where + " but has N1 = " + s(d.heads_q));
  if (a.layout_key == Layout::kPA_BSND && (d.block_size % 16 != 0 || d.block_size > 1024)) {
    fail(AOP_VALUE_ERROR, "key should have a block_size that is a multiple of 16 and <= 1024" + where + " but has " +
                              s(d.block_size));
  }
}

}  // namespace aop::lightning_indexer
