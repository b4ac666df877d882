// What a framework adapter hands an op's NPU host path (run_npu): the stream the kernel goes on
// and the framework's device allocator for this call's workspace. Header-only: adapter and host
// code are compiled into the same module, so nothing here crosses common's C boundary.
#pragma once
#include <cstddef>
#include <functional>

#include "ascend_ops/config.hpp"

AOP_NAMESPACE_BEGIN

struct NpuContext {
  void* stream = nullptr;  // aclrtStream: the framework's current stream for the call's device
  int device = 0;          // the device index the tensors live on
  // Device memory of `bytes` bytes, 512-byte aligned, from the framework's allocator, ordered on
  // `stream` (torch_npu's caching allocator through a device tensor; MindSpore's workspace
  // through PyboostRunner). The adapter keeps it alive until the call returns; the allocator's
  // stream ordering keeps it valid until the kernel that uses it has run.
  std::function<void*(size_t bytes)> workspace;
};

AOP_NAMESPACE_END
