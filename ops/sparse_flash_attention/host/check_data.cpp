// The checks that read tensor contents (lengths, block ids, indices), in the kernel's order, and
// the one place their messages are written: check_data throws through kernel_error, which also
// decodes the record the AscendC kernel writes.
#include <string>
#include <vector>

#include "ascend_ops/error.hpp"
#include "host/batches.h"
#include "host/sparse_flash_attention.h"

namespace aop::sparse_flash_attention {
namespace {

std::string s(int64_t v) { return std::to_string(v); }

[[noreturn]] void fail_record(int64_t code, int64_t at, int64_t value, int64_t aux, int64_t c4 = 0, int64_t c5 = 0,
                              int64_t c6 = 0) {
  const int64_t record[kSfaCheckWords] = {code, at, value, aux, c4, c5, c6, 0};
  throw kernel_error(record);
}

// A lengths tensor's first fault as the record of `codes` (negative, below the previous end,
// beyond the limit), in the kernel's layout.
void check_lengths(const aop_tensor& t, int64_t batch, bool cumulative, int64_t limit, Layout layout,
                   const int64_t (&codes)[3]) {
  const seq::LengthCheck c = seq::first_length_fault(t, batch, cumulative, limit);
  if (c.fault != seq::LengthFault::kNone) {
    fail_record(codes[static_cast<int>(c.fault)], c.batch, c.value, c.aux, static_cast<int64_t>(layout));
  }
}

}  // namespace

std::vector<Batch> batches(const Args& a, const Dims& d) {
  std::vector<Batch> out(static_cast<size_t>(d.batch));
  int64_t q_end = 0, kv_end = 0;
  for (int64_t b = 0; b < d.batch; ++b) {
    Batch& x = out[static_cast<size_t>(b)];
    if (a.layout_query == Layout::kTND) {
      const int64_t end = read_index(*a.actual_seq_lengths_query, b);
      x.q_begin = q_end;
      x.q_len = end - q_end;
      q_end = end;
    } else {
      x.q_begin = b * d.q_rows;
      x.q_len = a.actual_seq_lengths_query ? read_index(*a.actual_seq_lengths_query, b) : d.q_rows;
    }
    if (a.layout_kv == Layout::kTND) {
      const int64_t end = read_index(*a.actual_seq_lengths_kv, b);
      x.kv_begin = kv_end;
      x.kv_len = end - kv_end;
      kv_end = end;
    } else {
      x.kv_begin = 0;
      x.kv_len = a.actual_seq_lengths_kv ? read_index(*a.actual_seq_lengths_kv, b) : d.key_rows;
    }
  }
  return out;
}

void check_data(const Args& a, const Dims& d) {
  static constexpr int64_t kQ[3] = {kSfaLenQNegative, kSfaLenQBelowPrevious, kSfaLenQBeyond};
  static constexpr int64_t kKv[3] = {kSfaLenKvNegative, kSfaLenKvBelowPrevious, kSfaLenKvBeyond};
  if (a.actual_seq_lengths_query) {
    check_lengths(*a.actual_seq_lengths_query, d.batch, a.layout_query == Layout::kTND, d.q_rows, a.layout_query, kQ);
  }
  if (a.actual_seq_lengths_kv) {
    const int64_t limit = a.layout_kv == Layout::kPA_BSND ? d.max_blocks * d.block_size : d.key_rows;
    check_lengths(*a.actual_seq_lengths_kv, d.batch, a.layout_kv == Layout::kTND, limit, a.layout_kv, kKv);
  }
  const std::vector<Batch> bs = batches(a, d);
  if (a.layout_kv == Layout::kPA_BSND) {
    for (int64_t b = 0; b < d.batch; ++b) {
      const int64_t len = bs[static_cast<size_t>(b)].kv_len;
      const int64_t i = seq::first_bad_block(*a.block_table, b, d.max_blocks, len, d.block_size, d.num_blocks);
      if (i >= 0) {
        fail_record(kSfaBlockIdOutOfRange, b, read_index(*a.block_table, b * d.max_blocks + i), i, d.num_blocks, len,
                    d.block_size);
      }
    }
  }
  const int32_t* idx = static_cast<const int32_t*>(a.sparse_indices.data);
  for (int64_t b = 0; b < d.batch; ++b) {
    const Batch& x = bs[static_cast<size_t>(b)];
    for (int64_t r = 0; r < x.q_len; ++r) {
      const int64_t row = x.q_begin + r;
      const int64_t n = entries_read(visible_threshold(a.sparse_mode, x, r), d.topk, a.sparse_block_size);
      for (int64_t i = 0; i < n; ++i) {
        const int32_t v = idx[row * d.topk + i];
        if (v == -1) break;
        if (v < -1) fail_record(kSfaIndexBelowMinusOne, row, v, i, b, n);
      }
    }
  }
}

aop::Error kernel_error(const int64_t record[kSfaCheckWords]) {
  const int64_t code = record[0], at = record[1], v = record[2], aux = record[3];
  const auto message = [](const std::string& what) { return std::string("sparse_flash_attention: ") + what; };
  if (code >= kSfaLenQNegative && code <= kSfaLenKvBeyond) {
    const bool query = code <= kSfaLenQBeyond;
    const auto fault = static_cast<seq::LengthFault>((code - kSfaLenQNegative) % 3);
    const char* arg = query ? "actual_seq_lengths_query" : "actual_seq_lengths_kv";
    const char* limit = seq::length_limit_name(query, static_cast<Layout>(record[4]));
    return aop::Error(AOP_VALUE_ERROR, message(seq::length_message(arg, fault, at, v, aux, limit)));
  }
  if (code == kSfaBlockIdOutOfRange) {
    return aop::Error(AOP_INDEX_ERROR, message(seq::block_id_message(at, aux, v, record[4], record[5], record[6])));
  }
  if (code == kSfaIndexBelowMinusOne) {
    return aop::Error(AOP_INDEX_ERROR, message("sparse_indices row " + s(at) + " (batch " + s(record[4]) + ") entry " +
                                               s(aux) + " = " + s(v) + " should be >= -1 (-1 ends the row; " +
                                               s(record[5]) + " entries of the row are read)"));
  }
  return aop::Error(AOP_RUNTIME_ERROR, message("internal: unknown kernel error code " + s(code)));
}

}  // namespace aop::sparse_flash_attention
