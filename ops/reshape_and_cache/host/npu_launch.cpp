// The NPU backend: validation and tiling on the host (no data read), the tiling's device copy
// from common's operator cache, the check-slot workspace from the framework's allocator
// (NpuContext::workspace), the AscendC kernel queued on the caller's stream through the
// adapter's task queue. The kernel checks the slots itself (all or nothing) and records an
// error in this op's error record; it is raised at the next check point (npu/error_record.hpp).
// No host synchronisation, no copy and no allocation in steady state.
// Built against CANN's acl/acl.h (AOP_WITH_NPU) or the simulated runtime's (AOP_WITH_NPU_SIM).
#include "acl/acl.h"
#include "ascend_ops/npu/error_record.hpp"
#include "ascend_ops/npu/launch_buffers.hpp"
#include "ascend_ops/npu/npu_call.hpp"
#include "ascend_ops/platform.hpp"
#include "host/reshape_and_cache.h"
#include "kernel/reshape_and_cache_launch.h"

namespace aop::reshape_and_cache {
namespace {

constexpr const char* kOp = "reshape_and_cache";

npu::ErrorRecords& error_records() {
  static auto* records = new npu::ErrorRecords(kOp, &kernel_error);  // polled until the process ends
  return *records;
}

}  // namespace

void run_npu(const Args& args, const NpuContext& ctx) {
  npu::ErrorRecords& records = error_records();
  npu::begin_call(&records);
  const Args a = validated(args);
  if (a.slot_mapping.shape[0] == 0) return;
  const ReshapeAndCacheTiling t = tiling(a, current_platform());
  const npu::LaunchBuffers b = npu::launch_buffers(kOp, t, kernel_workspace_bytes(t), ctx, records);
  const auto gm = [](void* p) { return static_cast<uint8_t*>(p); };
  // The kernel's SyncAll needs every block resident at once (block_dim <= the AIV count).
  submit_npu_work(ctx, [=] {
    reshape_and_cache_launch(static_cast<uint32_t>(t.block_dim), b.stream, gm(a.key.data),
                             a.has_value ? gm(a.value.data) : nullptr, gm(a.key_cache.data),
                             a.has_value ? gm(a.value_cache.data) : nullptr, gm(a.slot_mapping.data),
                             b.workspace, b.record, b.tiling);
  });
  npu::end_call(kOp, b.stream, &records);
}

}  // namespace aop::reshape_and_cache
