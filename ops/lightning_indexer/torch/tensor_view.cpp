// The op's host arguments from torch tensors (see tensor_view.h).
#include "tensor_view.h"

namespace aop::torch_adapter {

namespace {
constexpr const char* kOp = "lightning_indexer";
namespace li = aop::lightning_indexer;

void set_attributes(li::Args& a, c10::string_view layout_query, c10::string_view layout_key, int64_t sparse_count,
                    int64_t sparse_mode) {
  call_host([&] {
    a.layout_query = li::parse_layout(std::string(layout_query), "layout_query", false);
    a.layout_key = li::parse_layout(std::string(layout_key), "layout_key", true);
  });
  a.sparse_count = sparse_count;
  a.sparse_mode = sparse_mode;
}

std::optional<aop_tensor> optional_view(const std::optional<at::Tensor>& t, const char* arg) {
  if (!t || !t->defined()) return std::nullopt;
  return to_aop_tensor(*t, Access::kRead, kOp, arg);
}

}  // namespace

li::Args make_args(const at::Tensor& query, const at::Tensor& key, const at::Tensor& weights,
                   const std::optional<at::Tensor>& actual_seq_lengths_query,
                   const std::optional<at::Tensor>& actual_seq_lengths_key,
                   const std::optional<at::Tensor>& block_table, c10::string_view layout_query,
                   c10::string_view layout_key, int64_t sparse_count, int64_t sparse_mode) {
  li::Args a;
  set_attributes(a, layout_query, layout_key, sparse_count, sparse_mode);
  a.query = to_aop_tensor(query, Access::kRead, kOp, "query");
  a.key = to_aop_tensor(key, Access::kRead, kOp, "key");
  a.weights = to_aop_tensor(weights, Access::kRead, kOp, "weights");
  a.actual_seq_lengths_query = optional_view(actual_seq_lengths_query, "actual_seq_lengths_query");
  a.actual_seq_lengths_key = optional_view(actual_seq_lengths_key, "actual_seq_lengths_key");
  a.block_table = optional_view(block_table, "block_table");
  return a;
}

std::optional<li::Args> make_static_args(const at::Tensor& query, const at::Tensor& key, const at::Tensor& weights,
                                         const std::optional<at::Tensor>& actual_seq_lengths_query,
                                         const std::optional<at::Tensor>& actual_seq_lengths_key,
                                         const std::optional<at::Tensor>& block_table, c10::string_view layout_query,
                                         c10::string_view layout_key, int64_t sparse_count, int64_t sparse_mode) {
  li::Args a;
  set_attributes(a, layout_query, layout_key, sparse_count, sparse_mode);
  // Every tensor is translated (an unknown dtype or device is refused even when a size is
  // symbolic); the Args exist only when all of them are static.
  bool all_static = true;
  const auto view = [&](const at::Tensor& t, const char* arg) {
    std::optional<aop_tensor> v = to_static_aop_tensor(t, kOp, arg);
    if (!v) all_static = false;
    return v.value_or(aop_tensor{});
  };
  const auto optional = [&](const std::optional<at::Tensor>& t, const char* arg) -> std::optional<aop_tensor> {
    if (!t || !t->defined()) return std::nullopt;
    return view(*t, arg);
  };
  a.query = view(query, "query");
  a.key = view(key, "key");
  a.weights = view(weights, "weights");
  a.actual_seq_lengths_query = optional(actual_seq_lengths_query, "actual_seq_lengths_query");
  a.actual_seq_lengths_key = optional(actual_seq_lengths_key, "actual_seq_lengths_key");
  a.block_table = optional(block_table, "block_table");
  if (!all_static) return std::nullopt;
  return a;
}

}  // namespace aop::torch_adapter
