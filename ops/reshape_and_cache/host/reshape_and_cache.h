// reshape_and_cache: the framework-neutral host entry every adapter calls.
// Validation, tiling and the CPU kernel live here; adapters only translate tensors.
#pragma once
#include "ascend_ops/platform.h"
#include "ascend_ops/tensor.h"
#include "kernel/reshape_and_cache_tiling.h"

namespace aop::reshape_and_cache {

struct Args {
  aop_tensor key;           // [T, H, Dk], rows may be strided, last two dims contiguous
  aop_tensor value;         // [T, H, Dv], same dtype as key
  aop_tensor key_cache;     // [num_blocks, block_size, H, Dk], contiguous
  aop_tensor value_cache;   // [num_blocks, block_size, H, Dv], contiguous
  aop_tensor slot_mapping;  // [T'] int32 or int64, T' <= T
};

// Checks dtypes, ranks, shapes, devices and layouts; throws aop::Error (TypeError or
// ValueError) naming the argument, the expected and the actual value. Reads no data.
void validate(const Args& args);

// Checks every slot is < num_blocks * block_size; throws aop::Error (IndexError) naming the
// token and the slot. Reads slot_mapping, so it needs host-readable memory.
void check_slots(const Args& args);

// The launch tiling for `platform`, from common's tiling cache (keyed by shapes, dtypes,
// strides and platform). Call after validate().
ReshapeAndCacheTiling tiling(const Args& args, const aop_platform& platform);

// validate + check_slots + the multi-threaded CPU copy. The only entry CPU adapters need.
void run_cpu(const Args& args);

}  // namespace aop::reshape_and_cache

namespace aop::reshape_and_cache {

// The NPU backend (built only with CANN, host/npu_launch.cpp): validates, checks the slots
// against a host copy of slot_mapping, then launches the AscendC kernel on `stream`
// (an aclrtStream). Not run on NPU by this project's CI: there is no device here.
void run_npu(const Args& args, void* stream);

}  // namespace aop::reshape_and_cache
