// MindSpore on Ascend: what an op's PyNative adapter hands its NPU host path (run_npu).
// Header-only, for every op's _ms module built with AOP_MS_ASCEND (C++ ABI 0). Not run on NPU:
// compile- and link-checked against the mindspore wheel (tests/test_ms_ascend_compile.py).
//
// The pattern (the one vLLM-MindSpore uses for its advance-step op, with the queue of this project's
// CPU path): PyboostRunner::Call<N> queues the op on MindSpore's frontend queue, in program
// order; there capture() records the current device context and stream id; the op then queues
// its own PyBoostDeviceTask, the queue where MindSpore's built-in ops launch their kernels, and
// inside it calls run_npu with npu_context(): MindSpore's stream for that id, and a workspace
// from MindSpore's device memory pool on that stream. The kernel therefore goes on the stream
// in program order with MindSpore's own kernels; nothing synchronises the host, nothing is
// copied (Parameters are passed by device address).
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "include/pynative/utils/pyboost/custom/tensor.h"                     // ms::Tensor
#include "include/runtime/hardware_abstract/device_context/device_context.h"  // DeviceContext
#include "utils/current_state.h"                                              // CurrentStream

#include "ascend_ops/config.hpp"
#include "ascend_ops/error.hpp"
#include "ascend_ops/mindspore_view.hpp"
#include "ascend_ops/npu_context.hpp"

AOP_NAMESPACE_BEGIN
namespace ms_adapter {

// MindSpore's device for this call, captured on its frontend queue (program order).
struct NpuTarget {
  const mindspore::device::DeviceContext* device_context = nullptr;
  uint32_t stream_id = 0;
};

// True when MindSpore's device_target is Ascend: the op takes its NPU path.
inline bool on_ascend() {
  return mindspore::DeviceManagerConf::GetInstance()->device_type() == mindspore::device::DeviceType::kAscend;
}

// The current device context and stream id; call on MindSpore's frontend queue.
inline NpuTarget capture() {
  const auto* device_context = mindspore::CurrentDeviceContext::get();
  if (device_context == nullptr || device_context->device_res_manager_ == nullptr) {
    throw Error(AOP_RUNTIME_ERROR, "ascend_ops: MindSpore has no current device context on Ascend");
  }
  return NpuTarget{device_context, mindspore::CurrentStream::id()};
}

// Workspace blocks of one call, from MindSpore's memory pool on the call's stream, given back
// when the call's device task ends. The pool orders reuse on that stream, so the kernel that
// uses a block has run before the block is handed out again (as for MindSpore's own kernels).
class Workspace {
 public:
  explicit Workspace(const NpuTarget& target) : target_(target) {}
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  ~Workspace() {
    for (void* block : blocks_) target_.device_context->device_res_manager_->FreeMemory(block);
  }

  void* allocate(size_t bytes) {
    void* block = target_.device_context->device_res_manager_->AllocateMemory(bytes, target_.stream_id);
    if (block == nullptr) {
      throw Error(AOP_MEMORY_ERROR, "ascend_ops: MindSpore's device memory pool could not allocate a workspace of " +
                                        std::to_string(bytes) + " bytes");
    }
    blocks_.push_back(block);
    return block;
  }

 private:
  NpuTarget target_;
  std::vector<void*> blocks_;
};

// The NpuContext of one call, inside its device task: MindSpore's stream for the captured id,
// the device index, workspace from `workspace` (which outlives the run_npu call). No submit:
// run_npu is already running on MindSpore's device queue.
inline NpuContext npu_context(const NpuTarget& target, Workspace& workspace) {
  NpuContext ctx;
  ctx.stream = target.device_context->device_res_manager_->GetStream(target.stream_id);
  if (ctx.stream == nullptr) {
    throw Error(AOP_RUNTIME_ERROR, "ascend_ops: MindSpore has no stream " + std::to_string(target.stream_id));
  }
  ctx.device = static_cast<int>(target.device_context->device_context_key().device_id_);
  ctx.workspace = [&workspace](size_t bytes) { return workspace.allocate(bytes); };
  return ctx;
}

}  // namespace ms_adapter
AOP_NAMESPACE_END
