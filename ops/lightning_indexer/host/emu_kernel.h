// The one place the AscendC kernel is run on common's emulator: run_emu (NumPy arrays,
// host/emu_launch.cpp) and the simulated runtime's lightning_indexer_launch (a task on a
// simulated stream, host/sim_launch.cpp) both call it.
#pragma once
#include <cstdint>

#include "ascend_ops/platform.h"
#include "ascendc_cpu/launch.h"

namespace aop::lightning_indexer {

// The kernel's GM arguments, as the <<<>>> wrapper takes them (optional ones may be null).
struct KernelArgs {
  void* query;
  void* key;
  void* weights;
  void* lengths_q;
  void* lengths_k;
  void* block_table;
  void* sparse_indices;
  void* sparse_values;
  void* workspace;     // the check slots, then the score workspace (kernel_workspace_bytes)
  void* error_record;  // 8 int64 words, zero when no error
  void* tiling;
};

// One MIX 1:2 launch of `block_dim` AIC groups of `platform`; `regions` bound every GM argument.
ascendc_cpu::LaunchReport emulate_kernel(const KernelArgs& args, int32_t block_dim, const aop_platform& platform,
                                         const ascendc_cpu::GmRegions& regions, ascendc_cpu::Order order,
                                         uint64_t seed);

}  // namespace aop::lightning_indexer
