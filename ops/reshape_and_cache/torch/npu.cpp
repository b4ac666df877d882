// reshape_and_cache on NPU tensors (torch_npu registers the NPU as PrivateUse1): translate,
// then the host's NPU backend launches the AscendC kernel on the current NPU stream.
//
// Built only where torch_npu and CANN are found (TORCH_NPU files of ascend_ops_add_op); here it
// is compile-checked against the torch_npu wheel's headers (tests/test_torch.py). It calls only
// what libtorch_npu exports: c10_npu::getCurrentNPUStream, NPUStream::stream(false),
// at_npu::native::OpCommand (common's torch_npu_context.hpp) and at_npu::native::get_npu_format (the op-plugin's EXEC_NPU_CMD needs symbols it does not).
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "torch_npu/csrc/core/npu/NPUFormat.h"
#include "torch_npu/csrc/core/npu/NPUStream.h"

#include "ascend_ops/torch_npu_context.hpp"

#include "host/reshape_and_cache.h"
#include "tensor_view.h"

namespace {

// torch_npu may keep a tensor in a private layout (FRACTAL_NZ, NC1HWC0, ...) whose bytes are
// not the row-major layout its strides describe. Only torch_npu knows, so the adapter asks.
void expect_plain_format(const at::Tensor& t, const char* arg) {
  const int64_t format = at_npu::native::get_npu_format(t);
  switch (format) {
    case ACL_FORMAT_ND:
    case ACL_FORMAT_NCHW:
    case ACL_FORMAT_NCDHW:
    case ACL_FORMAT_NC:
    case ACL_FORMAT_NCL:
      return;
    default:
      C10_THROW_ERROR(ValueError, std::string("reshape_and_cache: ") + arg +
                                      " should be in a plain (ND) torch_npu format but has "
                                      "aclFormat " + std::to_string(format) +
                                      "; convert it with torch_npu.npu_format_cast(t, 2)");
  }
}

void reshape_and_cache_npu(const at::Tensor& key,                         // [T, H, Dk] / [T, H*Dk], rows may be strided
                           const std::optional<at::Tensor>& value,        // [T, H, Dv] / [T, H*Dv], or None
                           at::Tensor& key_cache,                         // ND [num_blocks, block_size, H, Dk] / NZ
                           const std::optional<at::Tensor>& value_cache,  // the same with Dv, or None
                           const at::Tensor& slot_mapping,                // [T'] int32 / int64, T' <= T
                           int64_t cache_mode, std::optional<int64_t> head_num) {
  const aop::reshape_and_cache::Args args = aop::torch_adapter::make_args(
      key, value, key_cache, value_cache, slot_mapping, cache_mode, head_num);
  // Only NPU tensors have a torch_npu format; a tensor on another device is refused by the
  // host's device check (run_npu validates first).
  // (An NZ cache here is a plain tensor whose bytes are the NZ layout, cache_mode 1: still ND
  // to torch_npu.)
  const std::pair<const at::Tensor*, const char*> tensors[] = {
      {&key, "key"}, {value ? &*value : nullptr, "value"}, {&key_cache, "key_cache"},
      {value_cache ? &*value_cache : nullptr, "value_cache"}, {&slot_mapping, "slot_mapping"}};
  for (const auto& [tensor, name] : tensors) {
    if (tensor != nullptr && tensor->device().type() == c10::DeviceType::PrivateUse1) {
      expect_plain_format(*tensor, name);
    }
  }
  const c10::DeviceGuard device_guard(key.device());
  // torch_npu's stream without draining its task queue: the kernel is queued behind the ops
  // before it (OpCommand); workspace from its caching allocator.
  const aop::NpuContext ctx = aop::torch_adapter::torch_npu_context(key.device(), "reshape_and_cache");
  aop::torch_adapter::call_host([&] { aop::reshape_and_cache::run_npu(args, ctx); });
}

}  // namespace

TORCH_LIBRARY_IMPL(ascend_ops, PrivateUse1, m) {
  m.impl("reshape_and_cache", &reshape_and_cache_npu);
}
