// emulate_kernel: the launch configuration of the AscendC kernel on the emulator.
#ifdef AOP_WITH_EMU
#include "host/emu_kernel.h"

#include "ascend_ops/emu_config.hpp"

extern "C" void adv_step_flash_kernel(uint8_t* input_tokens, uint8_t* sampled_token_ids, uint8_t* input_positions,
                                      uint8_t* seq_lens, uint8_t* slot_mapping, uint8_t* block_tables,
                                      uint8_t* workspace, uint8_t* error_record, uint8_t* tiling);

namespace aop::adv_step_flash {

ascendc_cpu::LaunchReport emulate_kernel(const KernelArgs& a, int32_t block_dim, const aop_platform& platform,
                                         const ascendc_cpu::GmRegions& regions, ascendc_cpu::Order order,
                                         uint64_t seed) {
  // vector-only, with the SyncAll of the check phase
  const ascendc_cpu::LaunchConfig config = emu_launch_config("adv_step_flash_kernel", block_dim,
                                                             ascendc_cpu::KernelType::kMixAiv1_0, platform, order, seed);
  const auto gm = [](void* p) { return static_cast<uint8_t*>(p); };
  return ascendc_cpu::Launch(config, regions, adv_step_flash_kernel, gm(a.input_tokens), gm(a.sampled_token_ids),
                             gm(a.input_positions), gm(a.seq_lens), gm(a.slot_mapping), gm(a.block_tables),
                             gm(a.workspace), gm(a.error_record),
                             gm(a.tiling));
}

}  // namespace aop::adv_step_flash
#endif
