// Graph mode on Ascend (MindSpore 2.10 kernel-by-kernel): an op's run_npu as a KernelMod of the
// route CustomOpBuilder(backend="Ascend", op_def=<op yaml>) documents. The yaml (in the op's
// mindspore/ascend/) defines the primitive: mutated inputs `rw_write`, `side_effect_mem: True`,
// so the graph keeps the in-place write and orders it; MS_CUSTOM_OPS_REGISTER (custom_register.h)
// binds the primitive to an OpFuncImpl (shapes, dtypes) and to a KernelMod built on NpuKernelMod
// below. MindSpore hands Launch() the stream and the declared workspace; Parameters arrive as
// their device addresses (no copy). Header-only (C++ ABI 0). Not run on NPU: compile- and
// link-checked against the mindspore wheel (tests/test_ms_ascend_compile.py).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "include/runtime/hardware_abstract/kernel_base/common_utils.h"  // KernelAttr
#include "include/runtime/hardware_abstract/kernel_base/kernel.h"        // KernelMod, KernelTensor
#include "ops/ops_func_impl/op_func_impl.h"                               // OpFuncImpl

#include "ascend_ops/config.hpp"
#include "ascend_ops/error.hpp"
#include "ascend_ops/mindspore_view.hpp"
#include "ascend_ops/npu_context.hpp"

AOP_NAMESPACE_BEGIN
namespace ms_adapter {

// The workspace a graph kernel declares: MindSpore allocates it per launch from its pool, on the
// kernel's stream. run_npu's requests are served from it, 512-byte aligned: enough for
// reshape_and_cache / adv_step_flash (kernel_workspace_bytes = block_dim * 64 <= 3 KiB on 48
// vector cores); an op with a shape-dependent workspace (lightning_indexer's scores) must declare
// kernel_workspace_bytes(tiling) in Resize instead (an oversized request raises MemoryError).
inline constexpr size_t kGraphWorkspaceBytes = size_t{1} << 20;

// A contiguous device tensor from a KBK kernel tensor.
inline aop_tensor kernel_tensor_view(const mindspore::kernel::KernelTensor* t, int device, const char* op,
                                     const char* arg) {
  const std::vector<int64_t>& shape = t->GetShapeVector();
  return aot_tensor(t->device_ptr(), static_cast<int>(shape.size()), shape.data(),
                    to_aop_dtype(t->dtype_id(), op, arg), aop_device{AOP_DEVICE_NPU, device}, op, arg);
}

// An int scalar input of a KBK kernel (cache_mode, head_num, ...).
inline int64_t kernel_int(mindspore::kernel::KernelTensor* t) { return t->GetValueWithCheck<int64_t>(); }

// KernelMod of an op whose NPU host path is `Op::launch(inputs, outputs, ctx)` (builds the op's
// Args from the kernel tensors and calls run_npu). Launch never synchronises the host.
template <class Op>
class NpuKernelMod : public mindspore::kernel::KernelMod {
 public:
  std::vector<mindspore::kernel::KernelAttr> GetOpSupport() override { return {}; }

  bool Init(const std::vector<mindspore::kernel::KernelTensor*>& /*inputs*/,
            const std::vector<mindspore::kernel::KernelTensor*>& /*outputs*/) override {
    return true;
  }

  int Resize(const std::vector<mindspore::kernel::KernelTensor*>& inputs,
             const std::vector<mindspore::kernel::KernelTensor*>& outputs) override {
    const int status = KernelMod::Resize(inputs, outputs);
    workspace_size_list_ = {kGraphWorkspaceBytes};
    return status;
  }

  bool Launch(const std::vector<mindspore::kernel::KernelTensor*>& inputs,
              const std::vector<mindspore::kernel::KernelTensor*>& workspace,
              const std::vector<mindspore::kernel::KernelTensor*>& outputs, void* stream_ptr) override {
    auto* base = static_cast<char*>(workspace.at(0)->device_ptr());
    size_t used = 0;
    NpuContext ctx;
    ctx.stream = stream_ptr;
    ctx.device = static_cast<int>(device_id_);
    ctx.workspace = [base, &used](size_t bytes) -> void* {
      const size_t aligned = (bytes + 511) / 512 * 512;
      if (used + aligned > kGraphWorkspaceBytes) {
        throw Error(AOP_MEMORY_ERROR, std::string(Op::kName) + ": the graph kernel's workspace (" +
                                          std::to_string(kGraphWorkspaceBytes) + " bytes) is too small for " +
                                          std::to_string(bytes) + " more bytes");
      }
      void* block = base + used;
      used += aligned;
      return block;
    };
    // A host error (shapes MindSpore's infer let through) becomes MindSpore's exception for the
    // graph; data errors are the kernel's, raised at the next synchronisation (async_error.h).
    Op::launch(inputs, outputs, ctx);
    return true;
  }
};

}  // namespace ms_adapter
AOP_NAMESPACE_END
