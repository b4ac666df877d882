// The NpuContext a PyTorch PrivateUse1 (torch_npu) adapter hands run_npu: torch_npu's current
// stream for the device (taken without draining its task queue), workspace from torch_npu's
// caching allocator (a uint8 device tensor, held until the queued work has run), and the
// call's device work queued as an at_npu::native::OpCommand with a custom handler, in order
// with torch_npu's own ops (as vllm-ascend launches its AscendC kernels).
//
// Compiled only against torch_npu's headers (TORCH_NPU sources); it calls only what
// libtorch_npu exports: c10_npu::getCurrentNPUStream, NPUStream::stream(bool),
// OpCommand::OpCommand/Name/SetCustomHandler/Run.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ops/empty.h>
#include <c10/core/Device.h>

#include "torch_npu/csrc/core/npu/NPUStream.h"
#include "torch_npu/csrc/framework/OpCommand.h"

#include "ascend_ops/async_error.hpp"
#include "ascend_ops/npu/sync_checks.hpp"
#include "ascend_ops/npu_context.hpp"

AOP_NAMESPACE_BEGIN
namespace torch_adapter {

// An async-error poller (async_error.h) that, when check_errors() synchronises, first drains
// torch_npu's task queue for the current device (NPUStream::stream() empties it), so a call still
// queued there has launched before the error records' poller waits for the device. Registered
// before any op's records (when the adapter module loads, and again, idempotently, by
// torch_npu_context, which runs before run_npu), so it runs first.
inline void drain_torch_npu_queue(int synchronize, void* /*ctx*/) noexcept {
  if (synchronize == 0) return;
  try {
    (void)c10_npu::getCurrentNPUStream().stream();
  } catch (...) {  // no NPU: nothing was queued
  }
}
inline const bool kTorchNpuQueuePollerRegistered =
    (aop_async_error_add_poller(&drain_torch_npu_queue, nullptr), true);

// `op` names the OpCommand (torch_npu's profiler shows it). The workspace tensors live in the
// returned context's closures until the queued handler has run.
inline NpuContext torch_npu_context(const c10::Device& device, const char* op) {
  aop_async_error_add_poller(&drain_torch_npu_queue, nullptr);  // idempotent
  auto held = std::make_shared<std::vector<at::Tensor>>();
  NpuContext ctx;
  ctx.device = device.index();
  // With the debug switch (ASCEND_OPS_NPU_SYNC_CHECKS=1) the call runs at once on a drained
  // stream (stream() empties the task queue first) and run_npu checks synchronously.
  const bool sync = npu::sync_checks();
  ctx.stream = c10_npu::getCurrentNPUStream(device.index()).stream(sync);
  ctx.workspace = [held, device](size_t bytes) -> void* {
    held->push_back(at::empty({static_cast<int64_t>(bytes)},
                              at::TensorOptions().device(device).dtype(at::kByte)));
    return held->back().data_ptr();
  };
  if (sync) return ctx;
  ctx.submit = [held, name = std::string(op)](std::function<void()> work) {
    at_npu::native::OpCommand cmd;
    cmd.Name(name);
    cmd.SetCustomHandler([held, work = std::move(work)]() -> int {
      // The handler runs on torch_npu's queue thread: an error there is raised at the next
      // check point (check_errors() or the op's next call), like an in-kernel error.
      try {
        work();
      } catch (const Error& e) {
        post_async_error(e);
      }
      return 0;
    });
    cmd.Run();
  };
  return ctx;
}

}  // namespace torch_adapter
AOP_NAMESPACE_END
