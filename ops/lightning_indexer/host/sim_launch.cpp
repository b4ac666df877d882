// The simulated build's lightning_indexer_launch (the CANN build's is the <<<>>> wrapper in the
// kernel source): a task on the simulated stream that runs the kernel on the emulator, each GM
// argument bounded by its device allocation. Built only with AOP_WITH_NPU_SIM.
#ifdef AOP_WITH_NPU_SIM
#include <cstdio>

#include "ascend_ops/platform.hpp"
#include "ascend_sim/emulator_task.hpp"
#include "host/emu_kernel.h"
#include "kernel/lightning_indexer_launch.h"

extern "C" void lightning_indexer_launch(uint32_t block_dim, void* stream, uint8_t* query, uint8_t* key,
                                         uint8_t* weights, uint8_t* lengths_q, uint8_t* lengths_k,
                                         uint8_t* block_table, uint8_t* sparse_indices, uint8_t* sparse_values,
                                         uint8_t* workspace, uint8_t* error_record, uint8_t* tiling) {
  using aop::lightning_indexer::KernelArgs;
  const KernelArgs args{query, key, weights, lengths_q, lengths_k, block_table, sparse_indices, sparse_values,
                        workspace, error_record, tiling};
  const aclError rc = ascend_sim::launch_task(stream, "lightning_indexer_kernel", [args, block_dim] {
    using ascendc_cpu::GmKind;
    ascendc_cpu::GmRegions regions;
    ascend_sim::add_region(regions, args.query, "query", GmKind::kInput);
    ascend_sim::add_region(regions, args.key, "key", GmKind::kInput);
    ascend_sim::add_region(regions, args.weights, "weights", GmKind::kInput);
    ascend_sim::add_region(regions, args.lengths_q, "actual_seq_lengths_query", GmKind::kInput);
    ascend_sim::add_region(regions, args.lengths_k, "actual_seq_lengths_key", GmKind::kInput);
    ascend_sim::add_region(regions, args.block_table, "block_table", GmKind::kInput);
    ascend_sim::add_region(regions, args.sparse_indices, "sparse_indices", GmKind::kOutput);
    ascend_sim::add_region(regions, args.sparse_values, "sparse_values", GmKind::kOutput);
    ascend_sim::add_region(regions, args.workspace, "workspace", GmKind::kWorkspace);
    ascend_sim::add_region(regions, args.error_record, "error_record", GmKind::kOutput);
    ascend_sim::add_region(regions, args.tiling, "tiling", GmKind::kInput);
    aop::lightning_indexer::emulate_kernel(args, static_cast<int32_t>(block_dim), aop::current_platform(), regions,
                                           ascendc_cpu::Order::kInOrder, 0);
  });
  if (rc != ACL_SUCCESS) std::fprintf(stderr, "lightning_indexer_launch: the simulated launch failed (%d)\n", rc);
}
#endif
