// emulate_kernel: the launch configuration of the AscendC kernel on the emulator.
#ifdef AOP_WITH_EMU
#include "host/emu_kernel.h"

extern "C" void lightning_indexer_kernel(uint8_t* query, uint8_t* key, uint8_t* weights, uint8_t* lengths_q,
                                         uint8_t* lengths_k, uint8_t* block_table, uint8_t* sparse_indices,
                                         uint8_t* sparse_values, uint8_t* workspace, uint8_t* error_record, uint8_t* tiling);

namespace aop::lightning_indexer {

ascendc_cpu::LaunchReport emulate_kernel(const KernelArgs& a, int32_t block_dim, const aop_platform& platform,
                                         const ascendc_cpu::GmRegions& regions, ascendc_cpu::Order order,
                                         uint64_t seed) {
  ascendc_cpu::LaunchConfig config;
  config.kernel_name = "lightning_indexer_kernel";
  config.block_dim = block_dim;  // AICs; the MIX 1:2 launch adds two AIVs per AIC
  config.kernel_type = ascendc_cpu::KernelType::kMixAic1_2;  // as KERNEL_TASK_TYPE_DEFAULT in the kernel
  config.aiv_cores = platform.aiv_cores;
  config.aic_cores = platform.aic_cores;
  config.ub_bytes = platform.ub_bytes;
  config.l1_bytes = platform.l1_bytes;
  config.l0a_bytes = platform.l0a_bytes;
  config.l0b_bytes = platform.l0b_bytes;
  config.l0c_bytes = platform.l0c_bytes;
  config.order = order;
  config.seed = seed;
  const auto gm = [](void* p) { return static_cast<uint8_t*>(p); };
  return ascendc_cpu::Launch(config, regions, lightning_indexer_kernel, gm(a.query), gm(a.key), gm(a.weights),
                             gm(a.lengths_q), gm(a.lengths_k), gm(a.block_table), gm(a.sparse_indices),
                             gm(a.sparse_values), gm(a.workspace), gm(a.error_record), gm(a.tiling));
}

}  // namespace aop::lightning_indexer
#endif
