// The op's host arguments from torch tensors, through common's torch_view.hpp.
#pragma once
#include <optional>

#include <ATen/core/Tensor.h>

#include "ascend_ops/torch_view.hpp"
#include "host/reshape_and_cache.h"

namespace aop::torch_adapter {

// The op's host arguments from the five tensors of the schema (eager tensors, concrete sizes).
// key / value / slot_mapping are read, the caches written.
aop::reshape_and_cache::Args make_args(const at::Tensor& key,           // [T, H, Dk]
                                       const at::Tensor& value,         // [T, H, Dv]
                                       const at::Tensor& key_cache,     // [num_blocks, block_size, H, Dk]
                                       const at::Tensor& value_cache,   // [num_blocks, block_size, H, Dv]
                                       const at::Tensor& slot_mapping);  // [T']

// The same for Meta / FakeTensor inputs: std::nullopt when any size or stride is symbolic.
std::optional<aop::reshape_and_cache::Args> make_static_args(const at::Tensor& key,
                                                             const at::Tensor& value,
                                                             const at::Tensor& key_cache,
                                                             const at::Tensor& value_cache,
                                                             const at::Tensor& slot_mapping);

}  // namespace aop::torch_adapter
