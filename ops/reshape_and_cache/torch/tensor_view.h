// The op's host arguments from torch tensors, through common's torch_view.hpp.
#pragma once
#include <optional>

#include <ATen/core/Tensor.h>

#include "ascend_ops/torch_view.hpp"
#include "host/reshape_and_cache.h"

namespace aop::torch_adapter {

// The op's host arguments from the schema's tensors and attributes (eager tensors, concrete
// sizes). key / value / slot_mapping are read, the caches written; value and value_cache may
// be absent (a key-only cache: the host checks that both are).
aop::reshape_and_cache::Args make_args(const at::Tensor& key,                          // [T, H, Dk] / [T, H*Dk]
                                       const std::optional<at::Tensor>& value,         // [T, H, Dv] / [T, H*Dv]
                                       const at::Tensor& key_cache,                    // ND or NZ, see host
                                       const std::optional<at::Tensor>& value_cache,   // ND or NZ
                                       const at::Tensor& slot_mapping,                 // [T']
                                       int64_t cache_mode, std::optional<int64_t> head_num);

// The same for Meta / FakeTensor inputs: std::nullopt when any size or stride is symbolic.
std::optional<aop::reshape_and_cache::Args> make_static_args(const at::Tensor& key,
                                                             const std::optional<at::Tensor>& value,
                                                             const at::Tensor& key_cache,
                                                             const std::optional<at::Tensor>& value_cache,
                                                             const at::Tensor& slot_mapping, int64_t cache_mode,
                                                             std::optional<int64_t> head_num);

}  // namespace aop::torch_adapter
