// The PyNative entry of reshape_and_cache (MindSpore tensors and Parameters, eager).
#pragma once
#include <cstdint>
#include <optional>

#include "include/pynative/utils/pyboost/custom/tensor.h"  // ms::Tensor and its pybind11 caster

namespace aop::reshape_and_cache::ms_pynative {

// Validates shapes and dtypes on the calling thread, then queues the CPU kernel (which checks
// the slot values first) behind every op already issued, so MindSpore's own ops see the write
// in program order. Returns None without waiting for MindSpore's queue.
//   key          [T, H, Dk] / [T, H*Dk]   value [T, H, Dv] / [T, H*Dv] or None (key-only)
//   key_cache    ND [num_blocks, block_size, H, Dk] / NZ [num_blocks, H*Dk/F, block_size, F],
//                contiguous, written in place
//   value_cache  the same with Dv, or None (exactly when value is None)
//   slot_mapping [T'] int32 / int64, T' <= T
//   cache_mode   0 ND, 1 NZ; head_num 0 = not given
// Raises ValueError / TypeError (caches untouched), RuntimeError where this build has no
// backend for MindSpore's device_target. A slot out of range raises IndexError later (caches
// untouched): at MindSpore's next synchronisation (asnumpy, print) or check_errors().
pybind11::object reshape_and_cache(const ms::Tensor& key, const std::optional<ms::Tensor>& value,
                                   const ms::Tensor& key_cache, const std::optional<ms::Tensor>& value_cache,
                                   const ms::Tensor& slot_mapping, int64_t cache_mode, int64_t head_num);

}  // namespace aop::reshape_and_cache::ms_pynative
