// reshape_and_cache and torch's in-place bookkeeping (the ADInplaceOrView dispatch key).
//
// An in-place torch op bumps the version counter of every tensor it writes; autograd and
// torch's checks rely on it, and torch.library.custom_op does it for Python ops. torch's
// generic fallback only bumps tensors an op *returns*, and this op returns nothing, so it is
// done here: both caches are bumped first (an inference tensor written outside inference mode
// is then refused before anything is written), then the call goes on to the backend kernel.
#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

namespace {

void reshape_and_cache_inplace_or_view(c10::DispatchKeySet keys,
                                       const at::Tensor& key,                         // [T, H, Dk] / [T, H*Dk]
                                       const std::optional<at::Tensor>& value,        // or None
                                       at::Tensor& key_cache,                         // ND or NZ
                                       const std::optional<at::Tensor>& value_cache,  // or None
                                       const at::Tensor& slot_mapping,                // [T']
                                       int64_t cache_mode, std::optional<int64_t> head_num) {
  key_cache.unsafeGetTensorImpl()->bump_version();
  if (value_cache) value_cache->unsafeGetTensorImpl()->bump_version();
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("ascend_ops::reshape_and_cache", "")
          .typed<void(const at::Tensor&, const std::optional<at::Tensor>&, at::Tensor&,
                      const std::optional<at::Tensor>&, const at::Tensor&, int64_t, std::optional<int64_t>)>();
  const at::AutoDispatchBelowADInplaceOrView below_inplace_or_view;
  op.redispatch(keys & c10::after_ADInplaceOrView_keyset, key, value, key_cache, value_cache,
                slot_mapping, cache_mode, head_num);
}

}  // namespace

TORCH_LIBRARY_IMPL(ascend_ops, ADInplaceOrView, m) {
  m.impl("reshape_and_cache", TORCH_FN(reshape_and_cache_inplace_or_view));
}
