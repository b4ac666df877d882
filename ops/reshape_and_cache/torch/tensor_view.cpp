// The op's host arguments from torch tensors (see tensor_view.h).
#include "tensor_view.h"

namespace aop::torch_adapter {

namespace {
constexpr const char* kOp = "reshape_and_cache";
}  // namespace

aop::reshape_and_cache::Args make_args(const at::Tensor& key, const at::Tensor& value,
                                       const at::Tensor& key_cache, const at::Tensor& value_cache,
                                       const at::Tensor& slot_mapping) {
  return aop::reshape_and_cache::Args{
      to_aop_tensor(key, Access::kRead, kOp, "key"),
      to_aop_tensor(value, Access::kRead, kOp, "value"),
      to_aop_tensor(key_cache, Access::kWrite, kOp, "key_cache"),
      to_aop_tensor(value_cache, Access::kWrite, kOp, "value_cache"),
      to_aop_tensor(slot_mapping, Access::kRead, kOp, "slot_mapping"),
  };
}

std::optional<aop::reshape_and_cache::Args> make_static_args(const at::Tensor& key,
                                                             const at::Tensor& value,
                                                             const at::Tensor& key_cache,
                                                             const at::Tensor& value_cache,
                                                             const at::Tensor& slot_mapping) {
  // Every tensor is translated (so an unknown dtype or device is refused even when a size is
  // symbolic); the Args exist only when all of them are static.
  const std::optional<aop_tensor> views[] = {
      to_static_aop_tensor(key, kOp, "key"),
      to_static_aop_tensor(value, kOp, "value"),
      to_static_aop_tensor(key_cache, kOp, "key_cache"),
      to_static_aop_tensor(value_cache, kOp, "value_cache"),
      to_static_aop_tensor(slot_mapping, kOp, "slot_mapping"),
  };
  for (const auto& view : views) {
    if (!view) return std::nullopt;
  }
  return aop::reshape_and_cache::Args{*views[0], *views[1], *views[2], *views[3], *views[4]};
}

}  // namespace aop::torch_adapter
