// The one place the AscendC kernel is run on common's emulator: run_emu (NumPy arrays,
// host/emu_launch.cpp) and the simulated runtime's reshape_and_cache_launch (a task on a
// simulated stream, host/sim_launch.cpp) both call it.
#pragma once
#include <cstdint>

#include "ascend_ops/platform.h"
#include "ascendc_cpu/launch.h"

namespace aop::reshape_and_cache {

// The kernel's GM arguments, as the <<<>>> wrapper takes them (value / value_cache null for a
// key-only cache).
struct KernelArgs {
  void* key;
  void* value;
  void* key_cache;
  void* value_cache;
  void* slot_mapping;
  void* workspace;     // the per-core check slots (kernel_workspace_bytes)
  void* error_record;  // 8 int64 words, zero when no error
  void* tiling;
};

// One launch of `block_dim` AIV cores of `platform`; `regions` bound every GM argument.
ascendc_cpu::LaunchReport emulate_kernel(const KernelArgs& args, int32_t block_dim, const aop_platform& platform,
                                         const ascendc_cpu::GmRegions& regions, ascendc_cpu::Order order,
                                         uint64_t seed);

}  // namespace aop::reshape_and_cache
