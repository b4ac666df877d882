// The simulated build's reshape_and_cache_launch (the CANN build's is the <<<>>> wrapper in the
// kernel source): a task on the simulated stream that runs the kernel on the emulator, each GM
// argument bounded by its device allocation. Built only with AOP_WITH_NPU_SIM.
#ifdef AOP_WITH_NPU_SIM
#include <cstdio>

#include "ascend_ops/platform.hpp"
#include "ascend_sim/emulator_task.hpp"
#include "host/emu_kernel.h"
#include "kernel/reshape_and_cache_launch.h"
#include "kernel/reshape_and_cache_tiling.h"

extern "C" void reshape_and_cache_launch(uint32_t block_dim, void* stream, uint8_t* key, uint8_t* value,
                                         uint8_t* key_cache, uint8_t* value_cache, uint8_t* slot_mapping,
                                         uint8_t* workspace, uint8_t* error_record, uint8_t* tiling) {
  using aop::reshape_and_cache::KernelArgs;
  const KernelArgs args{key, value, key_cache, value_cache, slot_mapping, workspace, error_record, tiling};
  const aclError rc = ascend_sim::launch_task(stream, "reshape_and_cache_kernel", [args, block_dim] {
    using ascendc_cpu::GmKind;
    ascendc_cpu::GmRegions regions;
    ascend_sim::add_region(regions, args.key, "key", GmKind::kInput);
    ascend_sim::add_region(regions, args.value, "value", GmKind::kInput);
    ascend_sim::add_region(regions, args.key_cache, "key_cache", GmKind::kOutput);
    ascend_sim::add_region(regions, args.value_cache, "value_cache", GmKind::kOutput);
    ascend_sim::add_region(regions, args.slot_mapping, "slot_mapping", GmKind::kInput);
    ascend_sim::add_region(regions, args.workspace, "workspace", GmKind::kWorkspace);
    ascend_sim::add_region(regions, args.error_record, "error_record", GmKind::kOutput);
    ascend_sim::add_region(regions, args.tiling, "tiling", GmKind::kInput);
    aop::reshape_and_cache::emulate_kernel(args, static_cast<int32_t>(block_dim), aop::current_platform(), regions,
                                           ascendc_cpu::Order::kInOrder, 0);
  });
  // The real launch reports a bad stream only later too; here it cannot be one of ours.
  if (rc != ACL_SUCCESS) std::fprintf(stderr, "reshape_and_cache_launch: the simulated launch failed (%d)\n", rc);
}
#endif
