// The op's host arguments from torch tensors (see tensor_view.h).
#include "tensor_view.h"

namespace aop::torch_adapter {

namespace {
constexpr const char* kOp = "advance_step_flashattn";
}  // namespace

aop::adv_step_flash::Args make_args(int64_t num_seqs, int64_t num_queries, int64_t block_size,
                                    const at::Tensor& input_tokens, const at::Tensor& sampled_token_ids,
                                    const at::Tensor& input_positions, const at::Tensor& seq_lens,
                                    const at::Tensor& slot_mapping, const at::Tensor& block_tables) {
  return aop::adv_step_flash::Args{
      num_seqs,
      num_queries,
      block_size,
      to_aop_tensor(input_tokens, Access::kWrite, kOp, "input_tokens"),
      to_aop_tensor(sampled_token_ids, Access::kRead, kOp, "sampled_token_ids"),
      to_aop_tensor(input_positions, Access::kWrite, kOp, "input_positions"),
      to_aop_tensor(seq_lens, Access::kWrite, kOp, "seq_lens"),
      to_aop_tensor(slot_mapping, Access::kWrite, kOp, "slot_mapping"),
      to_aop_tensor(block_tables, Access::kRead, kOp, "block_tables"),
  };
}

std::optional<aop::adv_step_flash::Args> make_static_args(int64_t num_seqs, int64_t num_queries,
                                                          int64_t block_size, const at::Tensor& input_tokens,
                                                          const at::Tensor& sampled_token_ids,
                                                          const at::Tensor& input_positions,
                                                          const at::Tensor& seq_lens, const at::Tensor& slot_mapping,
                                                          const at::Tensor& block_tables) {
  // Every tensor is translated (so an unknown dtype or device is refused even when a size is
  // symbolic); the Args exist only when all of them are static.
  const std::optional<aop_tensor> views[] = {
      to_static_aop_tensor(input_tokens, kOp, "input_tokens"),
      to_static_aop_tensor(sampled_token_ids, kOp, "sampled_token_ids"),
      to_static_aop_tensor(input_positions, kOp, "input_positions"),
      to_static_aop_tensor(seq_lens, kOp, "seq_lens"),
      to_static_aop_tensor(slot_mapping, kOp, "slot_mapping"),
      to_static_aop_tensor(block_tables, kOp, "block_tables"),
  };
  for (const auto& view : views) {
    if (!view) return std::nullopt;
  }
  return aop::adv_step_flash::Args{num_seqs,  num_queries, block_size, *views[0], *views[1],
                                   *views[2], *views[3],   *views[4],  *views[5]};
}

}  // namespace aop::torch_adapter
