// The op's host arguments from torch tensors (see tensor_view.h).
#include "tensor_view.h"

namespace aop::torch_adapter {

namespace {
constexpr const char* kOp = "reshape_and_cache";

// The attributes: an int64 cache_mode that does not fit int32 becomes -1 (refused by the host).
void set_attributes(aop::reshape_and_cache::Args& args, bool has_value, bool has_value_cache,
                    int64_t cache_mode, std::optional<int64_t> head_num) {
  args.has_value = has_value;
  args.has_value_cache = has_value_cache;
  args.cache_mode = cache_mode == static_cast<int32_t>(cache_mode) ? static_cast<int32_t>(cache_mode) : -1;
  args.head_num = head_num.value_or(0);
}
}  // namespace

aop::reshape_and_cache::Args make_args(const at::Tensor& key, const std::optional<at::Tensor>& value,
                                       const at::Tensor& key_cache, const std::optional<at::Tensor>& value_cache,
                                       const at::Tensor& slot_mapping, int64_t cache_mode,
                                       std::optional<int64_t> head_num) {
  aop::reshape_and_cache::Args args{
      to_aop_tensor(key, Access::kRead, kOp, "key"),
      value ? to_aop_tensor(*value, Access::kRead, kOp, "value") : aop_tensor{},
      to_aop_tensor(key_cache, Access::kWrite, kOp, "key_cache"),
      value_cache ? to_aop_tensor(*value_cache, Access::kWrite, kOp, "value_cache") : aop_tensor{},
      to_aop_tensor(slot_mapping, Access::kRead, kOp, "slot_mapping"),
  };
  set_attributes(args, value.has_value(), value_cache.has_value(), cache_mode, head_num);
  return args;
}

std::optional<aop::reshape_and_cache::Args> make_static_args(const at::Tensor& key,
                                                             const std::optional<at::Tensor>& value,
                                                             const at::Tensor& key_cache,
                                                             const std::optional<at::Tensor>& value_cache,
                                                             const at::Tensor& slot_mapping, int64_t cache_mode,
                                                             std::optional<int64_t> head_num) {
  // Every tensor is translated (so an unknown dtype or device is refused even when a size is
  // symbolic); the Args exist only when all of them are static.
  const std::optional<aop_tensor> none = aop_tensor{};
  const std::optional<aop_tensor> views[] = {
      to_static_aop_tensor(key, kOp, "key"),
      value ? to_static_aop_tensor(*value, kOp, "value") : none,
      to_static_aop_tensor(key_cache, kOp, "key_cache"),
      value_cache ? to_static_aop_tensor(*value_cache, kOp, "value_cache") : none,
      to_static_aop_tensor(slot_mapping, kOp, "slot_mapping"),
  };
  for (const auto& view : views) {
    if (!view) return std::nullopt;
  }
  aop::reshape_and_cache::Args args{*views[0], *views[1], *views[2], *views[3], *views[4]};
  set_attributes(args, value.has_value(), value_cache.has_value(), cache_mode, head_num);
  return args;
}

}  // namespace aop::torch_adapter
