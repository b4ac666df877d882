// The emulator's launch configuration on a platform preset: what launch::emulate (emu_launch.hpp)
// would otherwise set field by field (kernel, cores and memories of the platform, block order).
#pragma once
#include <cstdint>

#include "ascend_ops/platform.h"
#include "ascendc_cpu/launch.h"

namespace aop {

inline ascendc_cpu::LaunchConfig emu_launch_config(const char* kernel_name, int32_t block_dim,
                                                   ascendc_cpu::KernelType kernel_type, const aop_platform& platform,
                                                   ascendc_cpu::Order order, uint64_t seed) {
  ascendc_cpu::LaunchConfig config;
  config.kernel_name = kernel_name;
  config.block_dim = block_dim;
  config.kernel_type = kernel_type;
  config.aiv_cores = platform.aiv_cores;
  config.aic_cores = platform.aic_cores;
  config.ub_bytes = platform.ub_bytes;
  config.l1_bytes = platform.l1_bytes;
  config.l0a_bytes = platform.l0a_bytes;
  config.l0b_bytes = platform.l0b_bytes;
  config.l0c_bytes = platform.l0c_bytes;
  config.soc = platform.soc;
  config.order = order;
  config.seed = seed;
  return config;
}

}  // namespace aop
