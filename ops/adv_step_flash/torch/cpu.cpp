// advance_step_flashattn on CPU tensors: translate, then the host's validated step.
#include <torch/library.h>

#include "host/adv_step_flash.h"
#include "tensor_view.h"

namespace {

void advance_step_flashattn_cpu(c10::SymInt num_seqs, c10::SymInt num_queries, int64_t block_size,
                                at::Tensor& input_tokens,             // [num_seqs] int64 / int32
                                const at::Tensor& sampled_token_ids,  // [num_queries(, 1)]
                                at::Tensor& input_positions,          // [num_seqs]
                                at::Tensor& seq_lens,                 // [num_seqs] int32 / int64
                                at::Tensor& slot_mapping,             // [num_seqs]
                                const at::Tensor& block_tables) {     // [num_seqs, max_blocks_per_seq]
  const aop::adv_step_flash::Args args =
      aop::torch_adapter::make_args(num_seqs.expect_int(), num_queries.expect_int(), block_size, input_tokens, sampled_token_ids,
                                    input_positions, seq_lens, slot_mapping, block_tables);
  aop::torch_adapter::call_host([&] { aop::adv_step_flash::run_cpu(args); });
}

}  // namespace

TORCH_LIBRARY_IMPL(ascend_ops, CPU, m) { m.impl("advance_step_flashattn", &advance_step_flashattn_cpu); }
