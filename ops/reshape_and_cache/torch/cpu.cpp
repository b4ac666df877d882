// reshape_and_cache on CPU tensors: translate, then the host's validated multi-threaded copy.
#include <torch/library.h>

#include "host/reshape_and_cache.h"
#include "tensor_view.h"

namespace {

void reshape_and_cache_cpu(const at::Tensor& key,                         // [T, H, Dk] / [T, H*Dk], rows may be strided
                           const std::optional<at::Tensor>& value,        // [T, H, Dv] / [T, H*Dv], or None
                           at::Tensor& key_cache,                         // ND [num_blocks, block_size, H, Dk] / NZ
                           const std::optional<at::Tensor>& value_cache,  // the same with Dv, or None
                           const at::Tensor& slot_mapping,                // [T'] int32 / int64, T' <= T
                           int64_t cache_mode, std::optional<int64_t> head_num) {
  const aop::reshape_and_cache::Args args = aop::torch_adapter::make_args(
      key, value, key_cache, value_cache, slot_mapping, cache_mode, head_num);
  aop::torch_adapter::call_host([&] { aop::reshape_and_cache::run_cpu(args); });
}

}  // namespace

TORCH_LIBRARY_IMPL(ascend_ops, CPU, m) { m.impl("reshape_and_cache", &reshape_and_cache_cpu); }
