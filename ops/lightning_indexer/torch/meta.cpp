// lightning_indexer on Meta tensors: the fake of the op for FakeTensor and torch.compile.
//
// The outputs are allocated with SymInt sizes taken from query and key ([B, S1, N2, K] or
// [T1, N2, K]), so one graph serves every size under torch.compile(dynamic=True). When every
// size and stride is static the host's validate() runs too (no data is read); when one is
// symbolic nothing is checked here — reading it would specialise the graph — and the real
// kernel validates at run time. Lengths and block ids are never checked here (data).
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "host/lightning_indexer.h"
#include "tensor_view.h"

namespace {

std::tuple<at::Tensor, std::optional<at::Tensor>> lightning_indexer_meta(
    const at::Tensor& query,    // [B, S1, N1, D] | [T1, N1, D]
    const at::Tensor& key,      // [num_blocks, block_size, N2, D] | [B, S2, N2, D] | [T2, N2, D]
    const at::Tensor& weights,  // [B, S1, N1] | [T1, N1]
    const std::optional<at::Tensor>& actual_seq_lengths_query,  // [B]
    const std::optional<at::Tensor>& actual_seq_lengths_key,    // [B]
    const std::optional<at::Tensor>& block_table,               // [B, max_blocks]
    c10::string_view layout_query, c10::string_view layout_key, int64_t sparse_count, int64_t sparse_mode,
    bool return_value) {
  namespace li = aop::lightning_indexer;
  const std::optional<li::Args> args = aop::torch_adapter::make_static_args(
      query, key, weights, actual_seq_lengths_query, actual_seq_lengths_key, block_table, layout_query, layout_key,
      sparse_count, sparse_mode);
  if (args) {
    aop::torch_adapter::call_host([&] { li::validate(*args, false); });
  }
  const bool tnd = layout_query == "TND";
  const int64_t q_rank = tnd ? 3 : 4;
  TORCH_CHECK_VALUE(query.dim() == q_rank && key.dim() >= 3, "lightning_indexer: query should be ",
                    tnd ? "TND [T1, N1, D]" : "BSND [B, S1, N1, D]", " but has ", query.dim(),
                    " dimensions (key: ", key.dim(), ")");
  std::vector<c10::SymInt> shape;
  if (tnd) {
    shape = {query.sym_size(0), key.sym_size(-2), c10::SymInt(sparse_count)};
  } else {
    shape = {query.sym_size(0), query.sym_size(1), key.sym_size(-2), c10::SymInt(sparse_count)};
  }
  at::Tensor indices = at::empty_symint(shape, query.options().dtype(at::kInt));
  std::optional<at::Tensor> values;
  if (return_value) values = at::empty_symint(shape, query.options().dtype(at::kFloat));
  return {indices, values};
}

}  // namespace

TORCH_LIBRARY_IMPL(ascend_ops, Meta, m) { m.impl("lightning_indexer", &lightning_indexer_meta); }
