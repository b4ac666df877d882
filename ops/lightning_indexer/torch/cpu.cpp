// lightning_indexer on CPU tensors: translate, allocate the outputs, then the host's fused
// multi-threaded kernel.
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "host/lightning_indexer.h"
#include "tensor_view.h"

namespace {

std::tuple<at::Tensor, std::optional<at::Tensor>> lightning_indexer_cpu(
    const at::Tensor& query,    // [B, S1, N1, D] | [T1, N1, D]
    const at::Tensor& key,      // [num_blocks, block_size, N2, D] | [B, S2, N2, D] | [T2, N2, D]
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
  std::vector<int64_t> shape;
  aop::torch_adapter::call_host([&] {
    li::validate(args, false);
    shape = li::output_shape(args);
  });
  at::Tensor indices = at::empty(shape, query.options().dtype(at::kInt));
  std::optional<at::Tensor> values;
  args.sparse_indices = aop::torch_adapter::to_aop_tensor(indices, aop::torch_adapter::Access::kWrite,
                                                          "lightning_indexer", "sparse_indices");
  if (return_value) {
    values = at::empty(shape, query.options().dtype(at::kFloat));
    args.sparse_values = aop::torch_adapter::to_aop_tensor(*values, aop::torch_adapter::Access::kWrite,
                                                           "lightning_indexer", "sparse_values");
  }
  aop::torch_adapter::call_host([&] { li::run_cpu(args); });
  return {indices, values};
}

}  // namespace

TORCH_LIBRARY_IMPL(ascend_ops, CPU, m) { m.impl("lightning_indexer", &lightning_indexer_cpu); }
