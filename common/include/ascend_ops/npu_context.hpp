// What a framework adapter hands an op's NPU host path (run_npu): the stream the kernel goes on,
// the framework's device allocator for this call's workspace and, where the framework has a
// task queue of its own (torch_npu), the way to put the call's device work on it. Header-only:
// adapter and host code are compiled into the same module, so nothing here crosses common's C
// boundary.
#pragma once
#include <cstddef>
#include <functional>
#include <utility>

#include "ascend_ops/config.hpp"

AOP_NAMESPACE_BEGIN

struct NpuContext {
  void* stream = nullptr;  // aclrtStream: the framework's current stream for the call's device
  int device = 0;          // the device index the tensors live on
  // Device memory of `bytes` bytes, 512-byte aligned, from the framework's allocator, ordered on
  // `stream` (torch_npu's caching allocator through a device tensor; MindSpore's workspace
  // through PyboostRunner). The adapter keeps it alive until the call's device work has been
  // put on the stream; the allocator's stream ordering keeps it valid until that work has run.
  std::function<void*(size_t bytes)> workspace;
  // Puts `work` (the call's asynchronous copies and kernel launch on `stream`; it makes no
  // host synchronisation) on the framework's task queue, in order with the framework's own
  // ops. Empty: run_npu runs it at once, on the calling thread (MindSpore's PyboostRunner
  // already calls run_npu inside its device task; tests on the simulated runtime).
  std::function<void(std::function<void()> work)> submit;
};

// Runs `work` through ctx.submit, or at once when the adapter has no task queue.
inline void submit_npu_work(const NpuContext& ctx, std::function<void()> work) {
  if (ctx.submit) {
    ctx.submit(std::move(work));
  } else {
    work();
  }
}

AOP_NAMESPACE_END
