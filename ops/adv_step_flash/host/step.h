// One row of the step, exact in int64, shared by check_data() and the CPU kernel (host-only).
#pragma once
#include <cstdint>
#include <limits>
#include <string>

#include "ascend_ops/error.hpp"
#include "host/adv_step_flash.h"

namespace aop::adv_step_flash::detail {

constexpr const char* kOp = "advance_step_flashattn";

// Element i of an int32 / int64 tensor whose elements are `stride` apart.
inline int64_t load(const aop_tensor& t, int64_t i) {
  return t.dtype == AOP_DTYPE_INT64 ? static_cast<const int64_t*>(t.data)[i]
                                    : static_cast<const int32_t*>(t.data)[i];
}

inline void store(const aop_tensor& t, int64_t i, int64_t v) {
  if (t.dtype == AOP_DTYPE_INT64) {
    static_cast<int64_t*>(t.data)[i] = v;
  } else {
    static_cast<int32_t*>(t.data)[i] = static_cast<int32_t>(v);
  }
}

inline bool fits(const aop_tensor& t, int64_t v) {
  return t.dtype == AOP_DTYPE_INT64 ||
         (v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max());
}

// index = pos / block_size, offset = pos % block_size for pos >= 0, block_size > 0, exactly.
// A 64-bit division costs tens of cycles on many x86 cores and dominated the step: a power of
// two block size (16, 128, ...) is a shift and a mask, other sizes use a 32-bit division
// where both fit, and only the rest a 64-bit one.
inline void divide(int64_t pos, int64_t block_size, int64_t& index, int64_t& offset) {
  const uint64_t bs = static_cast<uint64_t>(block_size);
  if ((bs & (bs - 1)) == 0) {
    const int shift = __builtin_ctzll(bs);
    index = pos >> shift;
    offset = pos & (block_size - 1);
  } else if (static_cast<uint64_t>(pos) <= std::numeric_limits<uint32_t>::max() &&
             bs <= std::numeric_limits<uint32_t>::max()) {
    const uint32_t p = static_cast<uint32_t>(pos), b = static_cast<uint32_t>(bs);
    index = p / b;
    offset = p % b;
  } else {
    index = pos / block_size;
    offset = pos % block_size;
  }
}

// The values one advancing row (i < num_queries) writes.
struct Row {
  int64_t token;
  int64_t position;
  int64_t slot;
};

[[noreturn]] inline void fail_row(aop_status status, const std::string& what) {
  throw aop::Error(status, std::string(kOp) + ": " + what);
}

inline void expect_fits(const aop_tensor& out, const char* name, int64_t i, int64_t value, const char* what) {
  if (!fits(out, value)) {
    fail_row(AOP_VALUE_ERROR, std::string(name) + " is int32 but " + what + " of sequence " + std::to_string(i) +
                                  " is " + std::to_string(value) + ", which does not fit (use int64)");
  }
}

// Computes row i < num_queries; throws (nothing written) if it cannot be written exactly.
// Integer division only: exact for every position, unlike a float division (wrong from 2^24).
inline Row compute_row(const Args& a, int64_t i) {
  const int64_t token = load(a.sampled_token_ids, i);
  const int64_t pos = load(a.seq_lens, i);
  if (pos < 0) {
    fail_row(AOP_VALUE_ERROR, "seq_lens[" + std::to_string(i) + "] = " + std::to_string(pos) +
                                  " is negative; a sequence length should be >= 0");
  }
  int64_t index = 0, offset = 0;
  divide(pos, a.block_size, index, offset);
  const int64_t max_blocks = a.block_tables.shape[1];
  if (index >= max_blocks) {
    fail_row(AOP_INDEX_ERROR, "block index " + std::to_string(index) + " (seq_lens[" + std::to_string(i) +
                                  "] = " + std::to_string(pos) + " // block_size " + std::to_string(a.block_size) +
                                  ") is beyond the block table: block_tables has max_blocks_per_seq = " +
                                  std::to_string(max_blocks));
  }
  const int64_t block = load(a.block_tables, i * a.block_tables.strides[0] + index);
  if (block < 0) {
    fail_row(AOP_VALUE_ERROR, "block_tables[" + std::to_string(i) + ", " + std::to_string(index) + "] = " +
                                  std::to_string(block) + " is negative; a block id should be >= 0");
  }
  int64_t slot = 0;
  if (__builtin_mul_overflow(block, a.block_size, &slot) || __builtin_add_overflow(slot, offset, &slot)) {
    fail_row(AOP_VALUE_ERROR, "the slot of sequence " + std::to_string(i) + " (block_tables[" + std::to_string(i) +
                                  ", " + std::to_string(index) + "] = " + std::to_string(block) + " * block_size " +
                                  std::to_string(a.block_size) + " + " + std::to_string(offset) +
                                  ") overflows int64");
  }
  if (pos == std::numeric_limits<int64_t>::max()) {
    fail_row(AOP_VALUE_ERROR, "seq_lens[" + std::to_string(i) + "] = " + std::to_string(pos) +
                                  " cannot be advanced: pos + 1 overflows int64");
  }
  expect_fits(a.input_tokens, "input_tokens", i, token, "sampled_token_ids");
  expect_fits(a.input_positions, "input_positions", i, pos, "the position");
  expect_fits(a.seq_lens, "seq_lens", i, pos + 1, "the new sequence length");
  expect_fits(a.slot_mapping, "slot_mapping", i, slot, "the slot");
  return Row{token, pos, slot};
}

}  // namespace aop::adv_step_flash::detail
