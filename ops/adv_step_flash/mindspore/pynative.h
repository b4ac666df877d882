// The PyNative entry of advance_step_flashattn (MindSpore tensors and Parameters, eager).
#pragma once
#include <cstdint>

#include "include/pynative/utils/pyboost/custom/tensor.h"  // ms::Tensor and its pybind11 caster

namespace aop::adv_step_flash::ms_pynative {

// Validates on the calling thread (shapes, dtypes, layouts, then the data the step reads, once
// every op issued before has produced it), then queues the CPU kernel behind every op already
// issued, so MindSpore's own ops see the four writes in program order. Returns None.
//   input_tokens [num_seqs], input_positions [num_seqs], seq_lens [num_seqs],
//   slot_mapping [num_seqs]: contiguous, written in place
//   sampled_token_ids [num_queries, 1] or [num_queries]; block_tables [num_seqs, max_blocks_per_seq]
// Raises ValueError / TypeError / IndexError (outputs untouched), RuntimeError where this
// build has no backend for MindSpore's device_target.
pybind11::object advance_step_flashattn(int64_t num_seqs, int64_t num_queries, int64_t block_size,
                                        const ms::Tensor& input_tokens, const ms::Tensor& sampled_token_ids,
                                        const ms::Tensor& input_positions, const ms::Tensor& seq_lens,
                                        const ms::Tensor& slot_mapping, const ms::Tensor& block_tables);

}  // namespace aop::adv_step_flash::ms_pynative
