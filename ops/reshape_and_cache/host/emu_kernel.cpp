// emulate_kernel: the launch configuration of the AscendC kernel on the emulator.
#ifdef AOP_WITH_EMU
#include "host/emu_kernel.h"

#include "ascend_ops/emu_config.hpp"

extern "C" void reshape_and_cache_kernel(uint8_t* key, uint8_t* value, uint8_t* key_cache,
                                         uint8_t* value_cache, uint8_t* slot_mapping, uint8_t* workspace, uint8_t* error_record, uint8_t* tiling);

namespace aop::reshape_and_cache {

ascendc_cpu::LaunchReport emulate_kernel(const KernelArgs& a, int32_t block_dim, const aop_platform& platform,
                                         const ascendc_cpu::GmRegions& regions, ascendc_cpu::Order order,
                                         uint64_t seed) {
  // vector-only, with the SyncAll of the check phase
  const ascendc_cpu::LaunchConfig config = emu_launch_config("reshape_and_cache_kernel", block_dim,
                                                             ascendc_cpu::KernelType::kMixAiv1_0, platform, order, seed);
  const auto gm = [](void* p) { return static_cast<uint8_t*>(p); };
  return ascendc_cpu::Launch(config, regions, reshape_and_cache_kernel, gm(a.key), gm(a.value), gm(a.key_cache),
                             gm(a.value_cache), gm(a.slot_mapping), gm(a.workspace), gm(a.error_record),
                             gm(a.tiling));
}

}  // namespace aop::reshape_and_cache
#endif
