// Every op's PrivateUse1 (torch_npu) kernel, derived from its description like torch_op.hpp's:
// translate, check that torch_npu keeps every NPU tensor in a plain format, allocate the outputs,
// then the host's NPU backend (Op::run_npu) launches the AscendC kernel on torch_npu's current
// stream (torch_npu_context.hpp: without draining its task queue; workspace from its caching
// allocator). Compiled only where torch_npu and CANN are found (TORCH_NPU sources of
// ascend_ops_add_op); compile-checked against the torch_npu wheel's headers. It calls only what
// libtorch_npu exports: c10_npu::getCurrentNPUStream, NPUStream::stream(false),
// at_npu::native::OpCommand and at_npu::native::get_npu_format.
#pragma once
#include <c10/core/DeviceGuard.h>

#include <string>

#include "torch_npu/csrc/core/npu/NPUFormat.h"
#include "torch_npu/csrc/core/npu/NPUStream.h"

#include "ascend_ops/torch_npu_context.hpp"
#include "ascend_ops/torch_op.hpp"

AOP_NAMESPACE_BEGIN
namespace torch_adapter {

// torch_npu may keep a tensor in a private layout (FRACTAL_NZ, NC1HWC0, ...) whose bytes are not
// the row-major layout its strides describe. Only torch_npu knows, so the adapter asks.
inline void expect_plain_format(const at::Tensor& t, const char* op, const char* arg) {
  const int64_t format = at_npu::native::get_npu_format(t);
  switch (format) {
    case ACL_FORMAT_ND:
    case ACL_FORMAT_NCHW:
    case ACL_FORMAT_NCDHW:
    case ACL_FORMAT_NC:
    case ACL_FORMAT_NCL:
      return;
    default:
      C10_THROW_ERROR(ValueError, std::string(op) + ": " + arg +
                                      " should be in a plain (ND) torch_npu format but has aclFormat " +
                                      std::to_string(format) + "; convert it with torch_npu.npu_format_cast(t, 2)");
  }
}

template <class Op>
void npu_kernel(const c10::OperatorHandle&, torch::jit::Stack* stack) {
  constexpr size_t n = kParamCount<Op>;
  const c10::ArrayRef<c10::IValue> in = torch::jit::last(*stack, n);
  typename Op::Args args = detail::eager_args<Op>(in);
  // Only NPU tensors have a torch_npu format; a tensor on another device is refused by the host's
  // device check (run_npu validates first).
  const auto& params = Op::params();
  for (size_t i = 0; i < n; ++i) {
    if (!params[i].is_tensor() || !in[i].isTensor()) continue;
    const at::Tensor& t = in[i].toTensor();
    if (t.device().type() == c10::DeviceType::PrivateUse1) expect_plain_format(t, Op::kName, params[i].name);
  }
  const at::Tensor& first = detail::first_tensor<Op>(in);
  const c10::DeviceGuard device_guard(first.device());
  std::vector<c10::IValue> outputs;
  if constexpr (kOutputCount<Op> > 0) {
    call_host([&] { Op::check_inputs(args); });
    outputs = detail::allocate_outputs<Op>(args, in, true);
  }
  const NpuContext ctx = torch_npu_context(first.device(), Op::kName);
  call_host([&] { Op::run_npu(args, ctx); });
  detail::replace_inputs(stack, n, std::move(outputs));
}

template <class Op>
void impl_npu(torch::Library& m) {
  m.impl(Op::kName, torch::CppFunction::makeFromBoxedFunction<&npu_kernel<Op>>());
}

}  // namespace torch_adapter
AOP_NAMESPACE_END
