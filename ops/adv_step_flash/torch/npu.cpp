// advance_step_flashattn on NPU tensors (torch_npu registers the NPU as PrivateUse1):
// translate, then the host's NPU backend launches the AscendC kernel on the current NPU stream.
//
// Built only where torch_npu and CANN are found (TORCH_NPU files of ascend_ops_add_op); here it
// is compile-checked against the torch_npu wheel's headers (tests/test_asf_torch.py). It calls
// only what libtorch_npu exports: c10_npu::getCurrentNPUStream, NPUStream::stream and
// at_npu::native::get_npu_format.
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "torch_npu/csrc/core/npu/NPUFormat.h"
#include "torch_npu/csrc/core/npu/NPUStream.h"

#include "ascend_ops/torch_npu_context.hpp"

#include "host/adv_step_flash.h"
#include "tensor_view.h"

namespace {

// torch_npu may keep a tensor in a private layout whose bytes are not the row-major layout its
// strides describe. Only torch_npu knows, so the adapter asks.
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
      C10_THROW_ERROR(ValueError, std::string("advance_step_flashattn: ") + arg +
                                      " should be in a plain (ND) torch_npu format but has aclFormat " +
                                      std::to_string(format) + "; convert it with torch_npu.npu_format_cast(t, 2)");
  }
}

void advance_step_flashattn_npu(c10::SymInt num_seqs, c10::SymInt num_queries, int64_t block_size,
                                at::Tensor& input_tokens,             // [num_seqs] int64 / int32
                                const at::Tensor& sampled_token_ids,  // [num_queries(, 1)]
                                at::Tensor& input_positions,          // [num_seqs]
                                at::Tensor& seq_lens,                 // [num_seqs] int32 / int64
                                at::Tensor& slot_mapping,             // [num_seqs]
                                const at::Tensor& block_tables) {     // [num_seqs, max_blocks_per_seq]
  const aop::adv_step_flash::Args args =
      aop::torch_adapter::make_args(num_seqs.expect_int(), num_queries.expect_int(), block_size, input_tokens, sampled_token_ids,
                                    input_positions, seq_lens, slot_mapping, block_tables);
  const std::pair<const at::Tensor*, const char*> tensors[] = {
      {&input_tokens, "input_tokens"}, {&sampled_token_ids, "sampled_token_ids"},
      {&input_positions, "input_positions"}, {&seq_lens, "seq_lens"},
      {&slot_mapping, "slot_mapping"}, {&block_tables, "block_tables"}};
  // Only NPU tensors have a torch_npu format; another device is refused by the host's check.
  for (const auto& [tensor, name] : tensors) {
    if (tensor->device().type() == c10::DeviceType::PrivateUse1) expect_plain_format(*tensor, name);
  }
  const c10::DeviceGuard device_guard(input_tokens.device());
  // torch_npu's stream without draining its task queue: the kernel is queued behind the ops
  // before it (OpCommand); workspace from its caching allocator.
  const aop::NpuContext ctx = aop::torch_adapter::torch_npu_context(input_tokens.device(), "advance_step_flashattn");
  aop::torch_adapter::call_host([&] { aop::adv_step_flash::run_npu(args, ctx); });
}

}  // namespace

TORCH_LIBRARY_IMPL(ascend_ops, PrivateUse1, m) { m.impl("advance_step_flashattn", &advance_step_flashattn_npu); }
