// Argument checks of advance_step_flashattn: everything is checked before anything is written.
#include <string>

#include "ascend_ops/error.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/adv_step_flash.h"
#include "host/step.h"

namespace aop::adv_step_flash {
namespace {

using detail::kOp;

[[noreturn]] void fail(aop_status status, const std::string& what) {
  throw aop::Error(status, std::string(kOp) + ": " + what);
}

void expect_int_dtype(const char* name, const aop_tensor& t) {
  if (t.dtype != AOP_DTYPE_INT32 && t.dtype != AOP_DTYPE_INT64) {
    fail(AOP_TYPE_ERROR, std::string(name) + " should have dtype int32 or int64 but has " + aop_dtype_name(t.dtype));
  }
}

// A [rows] tensor (rank 1, contiguous).
void expect_vector(const char* name, const TensorView& t, int64_t rows, const char* what) {
  if (t.ndim() != 1 || t.dim(0) != rows) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should be [" + what + "] = [" + std::to_string(rows) +
                              "] but has shape " + t.shape_string());
  }
  if (!t.is_contiguous()) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should be contiguous but has strides " + t.strides_string());
  }
}

void expect_same_device(const char* name, const aop_tensor& t, const aop_tensor& first) {
  if (t.device.type != first.device.type || t.device.index != first.device.index) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should be on the device of input_tokens (" +
                              device_string(first.device) + ") but is on " + device_string(t.device));
  }
}

void expect_data(const char* name, const TensorView& t) {
  if (t.device().type != AOP_DEVICE_META && t.numel() > 0 && t.data() == nullptr) {
    fail(AOP_VALUE_ERROR, std::string(name) + " has no data");
  }
}

}  // namespace

void validate_ints(int64_t num_seqs, int64_t num_queries, int64_t block_size) {
  if (num_queries <= 0 || num_queries > num_seqs) {
    fail(AOP_VALUE_ERROR, "num_queries should satisfy 0 < num_queries <= num_seqs but num_queries = " +
                              std::to_string(num_queries) + " and num_seqs = " + std::to_string(num_seqs));
  }
  if (block_size <= 0) {
    fail(AOP_VALUE_ERROR, "block_size should be > 0 but is " + std::to_string(block_size));
  }
}

void validate(const Args& a) {
  validate_ints(a.num_seqs, a.num_queries, a.block_size);
  const TensorView tokens(a.input_tokens), sampled(a.sampled_token_ids), positions(a.input_positions),
      seq_lens(a.seq_lens), slots(a.slot_mapping), tables(a.block_tables);

  expect_int_dtype("input_tokens", a.input_tokens);
  expect_int_dtype("sampled_token_ids", a.sampled_token_ids);
  expect_int_dtype("input_positions", a.input_positions);
  expect_int_dtype("seq_lens", a.seq_lens);
  expect_int_dtype("slot_mapping", a.slot_mapping);
  expect_int_dtype("block_tables", a.block_tables);

  expect_vector("input_tokens", tokens, a.num_seqs, "num_seqs");
  expect_vector("input_positions", positions, a.num_seqs, "num_seqs");
  expect_vector("seq_lens", seq_lens, a.num_seqs, "num_seqs");
  expect_vector("slot_mapping", slots, a.num_seqs, "num_seqs");

  const bool sampled_shape_ok = (sampled.ndim() == 1 || (sampled.ndim() == 2 && sampled.dim(1) == 1)) &&
                                sampled.dim(0) == a.num_queries;
  if (!sampled_shape_ok) {
    fail(AOP_VALUE_ERROR, "sampled_token_ids should be [num_queries, 1] or [num_queries] with num_queries = " +
                              std::to_string(a.num_queries) + " but has shape " + sampled.shape_string());
  }
  if (!sampled.is_contiguous()) {
    fail(AOP_VALUE_ERROR, "sampled_token_ids should be contiguous but has shape " + sampled.shape_string() +
                              " and strides " + sampled.strides_string());
  }

  if (tables.ndim() != 2 || tables.dim(0) != a.num_seqs) {
    fail(AOP_VALUE_ERROR, "block_tables should be [num_seqs, max_blocks_per_seq] with num_seqs = " +
                              std::to_string(a.num_seqs) + " but has shape " + tables.shape_string());
  }
  const int64_t width = tables.dim(1);
  const bool row_ok = width <= 1 || tables.stride(1) == 1;
  const bool rows_ok = tables.dim(0) <= 1 || tables.stride(0) >= width;
  if (!row_ok || !rows_ok) {
    fail(AOP_VALUE_ERROR, "block_tables should have contiguous rows (strides [>= " + std::to_string(width) +
                              ", 1]) but has strides " + tables.strides_string());
  }

  expect_same_device("sampled_token_ids", a.sampled_token_ids, a.input_tokens);
  expect_same_device("input_positions", a.input_positions, a.input_tokens);
  expect_same_device("seq_lens", a.seq_lens, a.input_tokens);
  expect_same_device("slot_mapping", a.slot_mapping, a.input_tokens);
  expect_same_device("block_tables", a.block_tables, a.input_tokens);

  expect_data("input_tokens", tokens);
  expect_data("sampled_token_ids", sampled);
  expect_data("input_positions", positions);
  expect_data("seq_lens", seq_lens);
  expect_data("slot_mapping", slots);
  expect_data("block_tables", tables);
}

void check_data(const Args& a) {
  for (int64_t i = 0; i < a.num_queries; ++i) detail::compute_row(a, i);
}

aop::Error kernel_error(const int64_t record[kAsfCheckWords]) {
  const std::string op = std::string(kOp) + ": ";
  const std::string i = std::to_string(record[1]), value = std::to_string(record[2]);
  const std::string aux = std::to_string(record[3]), c4 = std::to_string(record[4]), c5 = std::to_string(record[5]);
  const auto int32_error = [&](const char* name, const char* what) {
    return aop::Error(AOP_VALUE_ERROR, op + name + " is int32 but " + what + " of sequence " + i + " is " + value +
                                           ", which does not fit (use int64)");
  };
  switch (record[0]) {
    case kAsfSeqLenNegative:
      return aop::Error(AOP_VALUE_ERROR, op + "seq_lens[" + i + "] = " + value +
                                             " is negative; a sequence length should be >= 0");
    case kAsfBlockIndexBeyond:
      return aop::Error(AOP_INDEX_ERROR, op + "block index " + aux + " (seq_lens[" + i + "] = " + value +
                                             " // block_size " + c4 +
                                             ") is beyond the block table: block_tables has max_blocks_per_seq = " +
                                             c5);
    case kAsfBlockIdNegative:
      return aop::Error(AOP_VALUE_ERROR, op + "block_tables[" + i + ", " + aux + "] = " + value +
                                             " is negative; a block id should be >= 0");
    case kAsfSlotOverflow:
      return aop::Error(AOP_VALUE_ERROR, op + "the slot of sequence " + i + " (block_tables[" + i + ", " + aux +
                                             "] = " + value + " * block_size " + c4 + " + " + c5 +
                                             ") overflows int64");
    case kAsfSeqLenMax:
      return aop::Error(AOP_VALUE_ERROR, op + "seq_lens[" + i + "] = " + value +
                                             " cannot be advanced: pos + 1 overflows int64");
    case kAsfTokenInt32: return int32_error("input_tokens", "sampled_token_ids");
    case kAsfPositionInt32: return int32_error("input_positions", "the position");
    case kAsfSeqLenInt32: return int32_error("seq_lens", "the new sequence length");
    case kAsfSlotInt32: return int32_error("slot_mapping", "the slot");
    default:
      return aop::Error(AOP_RUNTIME_ERROR, op + "internal: unknown kernel error code " + std::to_string(record[0]));
  }
}

}  // namespace aop::adv_step_flash
