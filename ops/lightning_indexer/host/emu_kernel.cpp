// emulate_kernel: the launch configuration of the AscendC kernel on the emulator.
#ifdef AOP_WITH_EMU
#include "host/emu_kernel.h"

#include "ascend_ops/emu_config.hpp"

extern "C" void lightning_indexer_kernel(uint8_t* query, uint8_t* key, uint8_t* weights, uint8_t* lengths_q,
                                         uint8_t* lengths_k, uint8_t* block_table, uint8_t* sparse_indices,
                                         uint8_t* sparse_values, uint8_t* workspace, uint8_t* error_record, uint8_t* tiling);

namespace aop::lightning_indexer {

ascendc_cpu::LaunchReport emulate_kernel(const KernelArgs& a, int32_t block_dim, const aop_platform& platform,
                                         const ascendc_cpu::GmRegions& regions, ascendc_cpu::Order order,
                                         uint64_t seed) {
  // block_dim AICs, two AIVs each; as KERNEL_TASK_TYPE_DEFAULT in the kernel
  const ascendc_cpu::LaunchConfig config = emu_launch_config("lightning_indexer_kernel", block_dim,
                                                             ascendc_cpu::KernelType::kMixAic1_2, platform, order, seed);
  const auto gm = [](void* p) { return static_cast<uint8_t*>(p); };
  return ascendc_cpu::Launch(config, regions, lightning_indexer_kernel, gm(a.query), gm(a.key), gm(a.weights),
                             gm(a.lengths_q), gm(a.lengths_k), gm(a.block_table), gm(a.sparse_indices),
                             gm(a.sparse_values), gm(a.workspace), gm(a.error_record), gm(a.tiling));
}

}  // namespace aop::lightning_indexer
#endif
