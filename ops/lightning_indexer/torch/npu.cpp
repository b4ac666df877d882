// lightning_indexer on NPU tensors (torch_npu registers the NPU as PrivateUse1): translate,
// allocate the outputs, then the host's NPU backend launches the AscendC kernel on the current
// NPU stream.
//
// Built only where torch_npu and CANN are found (TORCH_NPU files of ascend_ops_add_op); here it
// is compile-checked against the torch_npu wheel's headers (tests/test_li_torch.py). It calls
// only what libtorch_npu exports: c10_npu::getCurrentNPUStream, NPUStream::stream and
// at_npu::native::get_npu_format.
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "torch_npu/csrc/core/npu/NPUFormat.h"
#include "torch_npu/csrc/core/npu/NPUStream.h"

#include "ascend_ops/torch_npu_context.hpp"

#include "host/lightning_indexer.h"
#include "tensor_view.h"

namespace {

// torch_npu may keep a tensor in a private layout (FRACTAL_NZ, ...) whose bytes are not the
// row-major layout its strides describe. Only torch_npu knows, so the adapter asks.
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
      C10_THROW_ERROR(ValueError, std::string("lightning_indexer: ") + arg +
                                      " should be in a plain (ND) torch_npu format but has aclFormat " +
                                      std::to_string(format) + "; convert it with torch_npu.npu_format_cast(t, 2)");
  }
}

std::tuple<at::Tensor, std::optional<at::Tensor>> lightning_indexer_npu(
    const at::Tensor& query,    // [B, S1, N1, D] | [T1, N1, D]
    const at::Tensor& key,      // [num_blocks, block_size, 1, D] | [B, S2, 1, D] | [T2, 1, D]
    const at::Tensor& weights,  // [B, S1, N1] | [T1, N1]
    const std::optional<at::Tensor>& actual_seq_lengths_query,  // [B]
    const std::optional<at::Tensor>& actual_seq_lengths_key,    // [B]
    const std::optional<at::Tensor>& block_table,               // [B, max_blocks]
    c10::string_view layout_query, c10::string_view layout_key, int64_t sparse_count, int64_t sparse_mode,
    bool return_value) {
  namespace li = aop::lightning_indexer;
  li::Args args = aop::torch_adapter::make_args(query, key, weights, actual_seq_lengths_query,
                                                actual_seq_lengths_key, block_table, layout_query, layout_key,
                                                sparse_count, sparse_mode);
  const std::pair<const at::Tensor*, const char*> tensors[] = {{&query, "query"}, {&key, "key"}, {&weights, "weights"}};
  for (const auto& [tensor, name] : tensors) {
    if (tensor->device().type() == c10::DeviceType::PrivateUse1) expect_plain_format(*tensor, name);
  }
  std::vector<int64_t> shape;
  aop::torch_adapter::call_host([&] {
    li::validate(args, false);
    shape = li::output_shape(args);
  });
  const c10::DeviceGuard device_guard(query.device());
  at::Tensor indices = at::empty(shape, query.options().dtype(at::kInt));
  std::optional<at::Tensor> values;
  args.sparse_indices = aop::torch_adapter::to_aop_tensor(indices, aop::torch_adapter::Access::kWrite,
                                                          "lightning_indexer", "sparse_indices");
  if (return_value) {
    values = at::empty(shape, query.options().dtype(at::kFloat));
    args.sparse_values = aop::torch_adapter::to_aop_tensor(*values, aop::torch_adapter::Access::kWrite,
                                                           "lightning_indexer", "sparse_values");
  }
  // torch_npu's stream without draining its task queue: the kernel is queued behind the ops
  // before it (OpCommand); workspace from its caching allocator.
  const aop::NpuContext ctx = aop::torch_adapter::torch_npu_context(query.device(), "lightning_indexer");
  aop::torch_adapter::call_host([&] { li::run_npu(args, ctx); });
  return {indices, values};
}

}  // namespace

TORCH_LIBRARY_IMPL(ascend_ops, PrivateUse1, m) { m.impl("lightning_indexer", &lightning_indexer_npu); }
