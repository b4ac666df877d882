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

// Throws the error of row i. The message is built in one place, kernel_error, which also turns
// the in-kernel checks' records into exceptions.
[[noreturn]] inline void fail_row(int64_t code, int64_t i, int64_t value, int64_t aux = 0, int64_t c4 = 0,
                                  int64_t c5 = 0) {
  const int64_t record[kAsfCheckWords] = {code, i, value, aux, c4, c5, 0, 0};
  throw kernel_error(record);
}

// Computes row i < num_queries; throws (nothing written) if it cannot be written exactly. The
// kernel's check phase (kernel/adv_step_flash_kernel.cpp) runs the same checks in the same order.
// Integer division only: exact for every position, unlike a float division (wrong from 2^24).
inline Row compute_row(const Args& a, int64_t i) {
  const int64_t token = load(a.sampled_token_ids, i);
  const int64_t pos = load(a.seq_lens, i);
  if (pos < 0) fail_row(kAsfSeqLenNegative, i, pos);
  int64_t index = 0, offset = 0;
  divide(pos, a.block_size, index, offset);
  const int64_t max_blocks = a.block_tables.shape[1];
  if (index >= max_blocks) fail_row(kAsfBlockIndexBeyond, i, pos, index, a.block_size, max_blocks);
  const int64_t block = load(a.block_tables, i * a.block_tables.strides[0] + index);
  if (block < 0) fail_row(kAsfBlockIdNegative, i, block, index);
  int64_t slot = 0;
  if (__builtin_mul_overflow(block, a.block_size, &slot) || __builtin_add_overflow(slot, offset, &slot)) {
    fail_row(kAsfSlotOverflow, i, block, index, a.block_size, offset);
  }
  if (pos == std::numeric_limits<int64_t>::max()) fail_row(kAsfSeqLenMax, i, pos);
  if (!fits(a.input_tokens, token)) fail_row(kAsfTokenInt32, i, token);
  if (!fits(a.input_positions, pos)) fail_row(kAsfPositionInt32, i, pos);
  if (!fits(a.seq_lens, pos + 1)) fail_row(kAsfSeqLenInt32, i, pos + 1);
  if (!fits(a.slot_mapping, slot)) fail_row(kAsfSlotInt32, i, slot);
  return Row{token, pos, slot};
}

}  // namespace aop::adv_step_flash::detail
