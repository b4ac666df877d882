// reshape_and_cache on Meta tensors: the fake of the op for FakeTensor and torch.compile.
//
// The op returns nothing, so the only work is to refuse what can be refused without data:
// when every size and stride is static, the host's validate() runs (no data is read);
// when one is symbolic (torch.compile(dynamic=True)), nothing is checked here — reading a
// symbolic size would specialise the graph — and the real kernel validates at run time.
// Slots are never checked here: that needs the values of slot_mapping.
#include <torch/library.h>

#include "host/reshape_and_cache.h"
#include "tensor_view.h"

namespace {

void reshape_and_cache_meta(const at::Tensor& key,                         // [T, H, Dk] / [T, H*Dk]
                            const std::optional<at::Tensor>& value,        // or None (key-only)
                            at::Tensor& key_cache,                         // ND or NZ
                            const std::optional<at::Tensor>& value_cache,  // or None
                            const at::Tensor& slot_mapping,                // [T']
                            int64_t cache_mode, std::optional<int64_t> head_num) {
  const std::optional<aop::reshape_and_cache::Args> args = aop::torch_adapter::make_static_args(
      key, value, key_cache, value_cache, slot_mapping, cache_mode, head_num);
  if (args) {
    aop::torch_adapter::call_host([&] { aop::reshape_and_cache::validate(*args); });
  }
}

}  // namespace

TORCH_LIBRARY_IMPL(ascend_ops, Meta, m) { m.impl("reshape_and_cache", &reshape_and_cache_meta); }
