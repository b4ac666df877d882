// advance_step_flashattn: the framework-neutral host entry every adapter calls.
// Validation, tiling and the CPU kernel live here; adapters only translate tensors.
#pragma once
#include <cstddef>
#include "ascend_ops/npu_context.hpp"
#include <cstdint>

#include "ascend_ops/error.hpp"
#include "ascend_ops/npu_context.hpp"
#include "ascend_ops/platform.h"
#include "ascend_ops/tensor.h"
#include "kernel/adv_step_flash_tiling.h"

namespace aop::adv_step_flash {

struct Args {
  int64_t num_seqs;              // > 0 rows of the four outputs
  int64_t num_queries;           // 0 < num_queries <= num_seqs; rows beyond are padding
  int64_t block_size;            // > 0
  aop_tensor input_tokens;       // [num_seqs] int64 / int32, contiguous; written
  aop_tensor sampled_token_ids;  // [num_queries, 1] or [num_queries] int64 / int32, contiguous
  aop_tensor input_positions;    // [num_seqs] int64 / int32, contiguous; written
  aop_tensor seq_lens;           // [num_seqs] int32 / int64, contiguous; read and written
  aop_tensor slot_mapping;       // [num_seqs] int64 / int32, contiguous; written
  aop_tensor block_tables;       // [num_seqs, max_blocks_per_seq] int32 / int64, rows may be strided
};

// The three integer arguments alone (what a Meta kernel can check when a size is symbolic):
// 0 < num_queries <= num_seqs, block_size > 0. ValueError otherwise.
void validate_ints(int64_t num_seqs, int64_t num_queries, int64_t block_size);

// validate_ints + dtypes, ranks, shapes, layouts and devices; throws aop::Error (TypeError or
// ValueError) naming the argument, the expected and the actual value. Reads no data.
void validate(const Args& args);

// Reads seq_lens[:num_queries], sampled_token_ids and the block-table entries the step uses
// and throws before anything is written: a negative seq_len or block id (ValueError), a
// block index pos // block_size >= max_blocks_per_seq (IndexError), a token, position, new
// seq_len or slot that does not fit its output's dtype (ValueError; e.g. an int32 slot_mapping
// overflow). Needs host-readable memory. Call after validate().
void check_data(const Args& args);

// The exception check_data raises for the same input, from an error record the kernel wrote
// (8 int64 words, kernel/adv_step_flash_tiling.h: AdvStepFlashError). check_data builds its
// exceptions here too, so both messages are one. An unknown code gives a RuntimeError.
aop::Error kernel_error(const int64_t record[kAsfCheckWords]);

// The launch tiling for `platform`, from common's tiling cache (keyed by the integer
// arguments, dtypes, the block-table layout and the platform). Call after validate().
AdvStepFlashTiling tiling(const Args& args, const aop_platform& platform);


// validate + check_data + the step on the CPU, inline for the batch sizes of decoding and on
// common's worker pool for very large batches. The only entry CPU adapters need.
void run_cpu(const Args& args);

// The NPU backend (common's npu::run_kernel over op.h; CANN or simulated builds): validates, checks the data
// against host copies of seq_lens, sampled_token_ids and block_tables, then launches the
// AscendC kernel on `stream` (an aclrtStream). Not run on NPU by this project: no device here.
void run_npu(const Args& args, const aop::NpuContext& ctx);

}  // namespace aop::adv_step_flash
