// The op's host arguments from torch tensors, through common's torch_view.hpp.
#pragma once
#include <optional>
#include <string>

#include <ATen/core/Tensor.h>

#include "ascend_ops/torch_view.hpp"
#include "host/lightning_indexer.h"

namespace aop::torch_adapter {

// The op's host inputs from the schema's arguments (eager tensors, concrete sizes); the
// outputs are left empty for the caller to allocate. Layout names are parsed here
// (ValueError for an unknown one).
aop::lightning_indexer::Args make_args(const at::Tensor& query,    // [B, S1, N1, D] | [T1, N1, D]
                                       const at::Tensor& key,      // [blocks, block_size, N2, D] | [B, S2, N2, D] | [T2, N2, D]
                                       const at::Tensor& weights,  // [B, S1, N1] | [T1, N1]
                                       const std::optional<at::Tensor>& actual_seq_lengths_query,  // [B]
                                       const std::optional<at::Tensor>& actual_seq_lengths_key,    // [B]
                                       const std::optional<at::Tensor>& block_table,  // [B, max_blocks]
                                       c10::string_view layout_query, c10::string_view layout_key,
                                       int64_t sparse_count, int64_t sparse_mode);

// The same for Meta / FakeTensor inputs: std::nullopt when any size or stride is symbolic.
std::optional<aop::lightning_indexer::Args> make_static_args(
    const at::Tensor& query, const at::Tensor& key, const at::Tensor& weights,
    const std::optional<at::Tensor>& actual_seq_lengths_query, const std::optional<at::Tensor>& actual_seq_lengths_key,
    const std::optional<at::Tensor>& block_table, c10::string_view layout_query, c10::string_view layout_key,
    int64_t sparse_count, int64_t sparse_mode);

}  // namespace aop::torch_adapter
