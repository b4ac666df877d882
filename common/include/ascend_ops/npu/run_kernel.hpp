// run_kernel<Op>: every op's NPU backend (run_npu), from the op's kernel description
// (kernel_launch.hpp). Validation and tiling on the host (no data read), the tiling's device copy
// from common's operator cache, the workspace from the framework's allocator
// (NpuContext::workspace), the kernel queued on the caller's stream through the adapter's task
// queue. The kernel checks the data itself (all or nothing) and records an error in the op's error
// record; it is raised at the next check point (error_record.hpp). No host synchronisation, no
// copy and no allocation in steady state.
// Built against CANN's acl/acl.h (AOP_WITH_NPU: the kernel's <<<>>> wrapper) or the simulated
// runtime's (AOP_WITH_NPU_SIM: a task on the simulated stream that runs the kernel on the
// emulator, each GM argument bounded by its device allocation).
#pragma once
#include <array>
#include <cstdint>
#include <cstdio>

#include "acl/acl.h"
#include "ascend_ops/kernel_launch.hpp"
#include "ascend_ops/npu/error_record.hpp"
#include "ascend_ops/npu/launch_buffers.hpp"
#include "ascend_ops/npu/npu_call.hpp"
#include "ascend_ops/npu_context.hpp"
#include "ascend_ops/platform.hpp"
#ifdef AOP_WITH_NPU_SIM
#include "ascend_ops/emu_launch.hpp"
#include "ascend_sim/emulator_task.hpp"
#endif

AOP_NAMESPACE_BEGIN
namespace npu {

// The op's error records, polled until the process ends.
template <class Op>
ErrorRecords& op_error_records() {
  static auto* records = new ErrorRecords(Op::kName, &Op::kernel_error);
  return *records;
}

// Puts the kernel on `stream`: block_dim blocks, every one resident at once (the check phase's
// SyncAll needs it: block_dim never exceeds the platform's cores).
template <class Op, size_t N, size_t M>
void launch_on_stream(uint32_t block_dim, aclrtStream stream, const std::array<launch::GmTensor, N>& tensors,
                      const std::array<uint8_t*, M>& p) {
#ifdef AOP_WITH_NPU_SIM
  const aclError rc = ascend_sim::launch_task(stream, Op::kKernel, [tensors, p, block_dim] {
    ascendc_cpu::GmRegions regions;
    for (size_t i = 0; i < N; ++i) {
      if (p[i] == nullptr) continue;
      ascend_sim::add_region(regions, p[i], tensors[i].name, launch::emu_kind(tensors[i].role));
      launch::add_view(regions.back(), tensors[i]);  // a strided output: its elements, not the allocation's rest
    }
    ascend_sim::add_region(regions, p[N], launch::kWorkspaceName, ascendc_cpu::GmKind::kWorkspace);
    ascend_sim::add_region(regions, p[N + 1], launch::kRecordName, ascendc_cpu::GmKind::kOutput);
    ascend_sim::add_region(regions, p[N + 2], launch::kTilingName, ascendc_cpu::GmKind::kInput);
    launch::emulate<Op>(p, static_cast<int32_t>(block_dim), current_platform(), regions, ascendc_cpu::Order::kInOrder, 0);
  });
  // The real launch reports a bad stream only later too; here it cannot be one of ours.
  if (rc != ACL_SUCCESS) std::fprintf(stderr, "%s: the simulated launch failed (%d)\n", Op::kKernel, rc);
#else
  (void)tensors;
  launch::call_with_pointers(Op::npu_launch(), p, block_dim, static_cast<void*>(stream));
#endif
}

template <class Op>
void run_kernel(const typename Op::Args& args, const NpuContext& ctx) {
  ErrorRecords& records = op_error_records<Op>();
  begin_call(&records);
  const auto prepared = Op::prepare(args);
  const auto tiling = Op::tiling(prepared, current_platform());
  if (Op::nothing_to_launch(prepared, tiling)) return;
  const LaunchBuffers b = launch_buffers(Op::kName, tiling, Op::workspace_bytes(tiling), ctx, records);
  const auto tensors = Op::gm_tensors(prepared);
  const auto p = launch::kernel_pointers(tensors, b.workspace, b.record, b.tiling);
  const auto block_dim = static_cast<uint32_t>(tiling.block_dim);
  submit_npu_work(ctx, [=] { launch_on_stream<Op>(block_dim, b.stream, tensors, p); });
  end_call(Op::kName, b.stream, &records);
}

}  // namespace npu
AOP_NAMESPACE_END
