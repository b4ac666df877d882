// The PyNative entry of advance_step_flashattn (MindSpore tensors and Parameters, eager).
#pragma once
#include <cstdint>

#include "include/pynative/utils/pyboost/custom/tensor.h"  // ms::Tensor and its pybind11 caster

namespace aop::adv_step_flash::ms_pynative {

// Validates shapes, dtypes and layouts on the calling thread, then queues the CPU kernel (which
// checks the data the step reads first) behind every op already issued, so MindSpore's own ops
// see the four writes in program order. Returns None without waiting for MindSpore's queue.
//   input_tokens [num_seqs], input_positions [num_seqs], seq_lens [num_seqs],
//   slot_mapping [num_seqs]: contiguous, written in place
//   sampled_token_ids [num_queries, 1] or [num_queries]; block_tables [num_seqs, max_blocks_per_seq]
// Raises ValueError / TypeError (outputs untouched), RuntimeError where this build has no
// backend for MindSpore's device_target. Bad data (a length or block id out of range) raises
// later, outputs untouched: at MindSpore's next synchronisation (asnumpy, print) or check_errors().
pybind11::object advance_step_flashattn(int64_t num_seqs, int64_t num_queries, int64_t block_size,
                                        const ms::Tensor& input_tokens, const ms::Tensor& sampled_token_ids,
                                        const ms::Tensor& input_positions, const ms::Tensor& seq_lens,
                                        const ms::Tensor& slot_mapping, const ms::Tensor& block_tables);

}  // namespace aop::adv_step_flash::ms_pynative
