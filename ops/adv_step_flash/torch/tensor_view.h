// The op's host arguments from torch tensors, through common's torch_view.hpp.
#pragma once
#include <cstdint>
#include <optional>

#include <ATen/core/Tensor.h>

#include "ascend_ops/torch_view.hpp"
#include "host/adv_step_flash.h"

namespace aop::torch_adapter {

// The op's host arguments from the schema's arguments (eager tensors, concrete sizes). The
// four outputs are written, sampled_token_ids and block_tables read.
aop::adv_step_flash::Args make_args(int64_t num_seqs, int64_t num_queries, int64_t block_size,
                                    const at::Tensor& input_tokens,       // [num_seqs]
                                    const at::Tensor& sampled_token_ids,  // [num_queries(, 1)]
                                    const at::Tensor& input_positions,    // [num_seqs]
                                    const at::Tensor& seq_lens,           // [num_seqs]
                                    const at::Tensor& slot_mapping,       // [num_seqs]
                                    const at::Tensor& block_tables);      // [num_seqs, max_blocks_per_seq]

// The same for Meta / FakeTensor inputs: std::nullopt when any size or stride is symbolic.
std::optional<aop::adv_step_flash::Args> make_static_args(int64_t num_seqs, int64_t num_queries,
                                                          int64_t block_size, const at::Tensor& input_tokens,
                                                          const at::Tensor& sampled_token_ids,
                                                          const at::Tensor& input_positions,
                                                          const at::Tensor& seq_lens, const at::Tensor& slot_mapping,
                                                          const at::Tensor& block_tables);

}  // namespace aop::torch_adapter
