// The simulated build's adv_step_flash_launch (the CANN build's is the <<<>>> wrapper in the
// kernel source): a task on the simulated stream that runs the kernel on the emulator, each GM
// argument bounded by its device allocation. Built only with AOP_WITH_NPU_SIM.
#ifdef AOP_WITH_NPU_SIM
#include <cstdio>

#include "ascend_ops/platform.hpp"
#include "ascend_sim/emulator_task.hpp"
#include "host/emu_kernel.h"
#include "kernel/adv_step_flash_launch.h"

extern "C" void adv_step_flash_launch(uint32_t block_dim, void* stream, uint8_t* input_tokens,
                                      uint8_t* sampled_token_ids, uint8_t* input_positions, uint8_t* seq_lens,
                                      uint8_t* slot_mapping, uint8_t* block_tables, uint8_t* workspace,
                                      uint8_t* error_record, uint8_t* tiling) {
  using aop::adv_step_flash::KernelArgs;
  const KernelArgs args{input_tokens, sampled_token_ids, input_positions, seq_lens, slot_mapping,
                        block_tables, workspace, error_record, tiling};
  const aclError rc = ascend_sim::launch_task(stream, "adv_step_flash_kernel", [args, block_dim] {
    using ascendc_cpu::GmKind;
    ascendc_cpu::GmRegions regions;
    ascend_sim::add_region(regions, args.input_tokens, "input_tokens", GmKind::kOutput);
    ascend_sim::add_region(regions, args.sampled_token_ids, "sampled_token_ids", GmKind::kInput);
    ascend_sim::add_region(regions, args.input_positions, "input_positions", GmKind::kOutput);
    ascend_sim::add_region(regions, args.seq_lens, "seq_lens", GmKind::kOutput);
    ascend_sim::add_region(regions, args.slot_mapping, "slot_mapping", GmKind::kOutput);
    ascend_sim::add_region(regions, args.block_tables, "block_tables", GmKind::kInput);
    ascend_sim::add_region(regions, args.workspace, "workspace", GmKind::kWorkspace);
    ascend_sim::add_region(regions, args.error_record, "error_record", GmKind::kOutput);
    ascend_sim::add_region(regions, args.tiling, "tiling", GmKind::kInput);
    aop::adv_step_flash::emulate_kernel(args, static_cast<int32_t>(block_dim), aop::current_platform(), regions,
                                        ascendc_cpu::Order::kInOrder, 0);
  });
  if (rc != ACL_SUCCESS) std::fprintf(stderr, "adv_step_flash_launch: the simulated launch failed (%d)\n", rc);
}
#endif
