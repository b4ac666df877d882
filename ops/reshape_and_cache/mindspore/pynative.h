// The PyNative entry of reshape_and_cache (MindSpore tensors and Parameters, eager).
#pragma once
#include "include/pynative/utils/pyboost/custom/tensor.h"  // ms::Tensor and its pybind11 caster

namespace aop::reshape_and_cache::ms_pynative {

// Validates on the calling thread, then queues the CPU kernel behind every op already issued,
// so MindSpore's own ops see the write in program order. Returns None.
//   key          [T, H, Dk]    value        [T, H, Dv]    (token rows may be strided)
//   key_cache    [num_blocks, block_size, H, Dk], contiguous, written in place
//   value_cache  [num_blocks, block_size, H, Dv], contiguous, written in place
//   slot_mapping [T'] int32 / int64, T' <= T
// Raises ValueError / TypeError / IndexError (caches untouched), RuntimeError where this
// build has no backend for MindSpore's device_target.
pybind11::object reshape_and_cache(const ms::Tensor& key, const ms::Tensor& value, const ms::Tensor& key_cache,
                                   const ms::Tensor& value_cache, const ms::Tensor& slot_mapping);

}  // namespace aop::reshape_and_cache::ms_pynative
