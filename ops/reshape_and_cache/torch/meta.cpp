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

void reshape_and_cache_meta(const at::Tensor& key,           // [T, H, Dk]
                            const at::Tensor& value,         // [T, H, Dv]
                            at::Tensor& key_cache,           // [num_blocks, block_size, H, Dk]
                            at::Tensor& value_cache,         // [num_blocks, block_size, H, Dv]
                            const at::Tensor& slot_mapping) {  // [T']
  const std::optional<aop::reshape_and_cache::Args> args =
      aop::torch_adapter::make_static_args(key, value, key_cache, value_cache, slot_mapping);
  if (args) {
    aop::torch_adapter::call_host([&] { aop::reshape_and_cache::validate(*args); });
  }
}

}  // namespace

TORCH_LIBRARY_IMPL(ascend_ops, Meta, m) { m.impl("reshape_and_cache", &reshape_and_cache_meta); }
