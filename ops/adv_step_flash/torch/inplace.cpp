// advance_step_flashattn and torch's in-place bookkeeping (the ADInplaceOrView dispatch key).
//
// An in-place torch op bumps the version counter of every tensor it writes; autograd and
// torch's checks rely on it. torch's generic fallback only bumps tensors an op *returns*, and
// this op returns nothing, so it is done here: the four outputs are bumped first (an inference
// tensor written outside inference mode is then refused before anything is written), then the
// call goes on to the backend kernel.
#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

namespace {

void advance_step_flashattn_inplace_or_view(c10::DispatchKeySet keys, c10::SymInt num_seqs, c10::SymInt num_queries,
                                            int64_t block_size,
                                            at::Tensor& input_tokens,             // [num_seqs]
                                            const at::Tensor& sampled_token_ids,  // [num_queries(, 1)]
                                            at::Tensor& input_positions,          // [num_seqs]
                                            at::Tensor& seq_lens,                 // [num_seqs]
                                            at::Tensor& slot_mapping,             // [num_seqs]
                                            const at::Tensor& block_tables) {     // [num_seqs, max_blocks]
  input_tokens.unsafeGetTensorImpl()->bump_version();
  input_positions.unsafeGetTensorImpl()->bump_version();
  seq_lens.unsafeGetTensorImpl()->bump_version();
  slot_mapping.unsafeGetTensorImpl()->bump_version();
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("ascend_ops::advance_step_flashattn", "")
                             .typed<void(c10::SymInt, c10::SymInt, int64_t, at::Tensor&, const at::Tensor&, at::Tensor&,
                                         at::Tensor&, at::Tensor&, const at::Tensor&)>();
  const at::AutoDispatchBelowADInplaceOrView below_inplace_or_view;
  op.redispatch(keys & c10::after_ADInplaceOrView_keyset, std::move(num_seqs), std::move(num_queries), block_size, input_tokens,
                sampled_token_ids, input_positions, seq_lens, slot_mapping, block_tables);
}

}  // namespace

TORCH_LIBRARY_IMPL(ascend_ops, ADInplaceOrView, m) {
  m.impl("advance_step_flashattn", TORCH_FN(advance_step_flashattn_inplace_or_view));
}
