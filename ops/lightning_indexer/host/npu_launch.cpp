// The NPU backend: validation and tiling on the host (no data read), the tiling's device copy
// from common's operator cache, the workspace (check slots, then the score workspace) from the
// framework's allocator (NpuContext::workspace), the AscendC kernel queued on the caller's
// stream through the adapter's task queue. The kernel checks lengths and block ids itself (all
// or nothing) and records an error in this op's error record; it is raised at the next check
// point (npu/error_record.hpp). No host synchronisation, no copy and no allocation in steady state.
// Built against CANN's acl/acl.h (AOP_WITH_NPU) or the simulated runtime's (AOP_WITH_NPU_SIM).
#include "acl/acl.h"
#include "ascend_ops/npu/error_record.hpp"
#include "ascend_ops/npu/launch_buffers.hpp"
#include "ascend_ops/npu/npu_call.hpp"
#include "ascend_ops/platform.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/lightning_indexer.h"
#include "kernel/lightning_indexer_launch.h"

namespace aop::lightning_indexer {
namespace {

constexpr const char* kOp = "lightning_indexer";

npu::ErrorRecords& error_records() {
  static auto* records = new npu::ErrorRecords(kOp, &kernel_error);  // polled until the process ends
  return *records;
}

uint8_t* gm(void* p) { return static_cast<uint8_t*>(p); }
uint8_t* gm_or_null(const std::optional<aop_tensor>& t) { return t ? gm(t->data) : nullptr; }

}  // namespace

void run_npu(const Args& a, const NpuContext& ctx) {
  npu::ErrorRecords& records = error_records();
  npu::begin_call(&records);
  const Dims d = validate(a);
  check_npu_limits(a, d);
  const LightningIndexerTiling t = kernel_tiling(a, d, current_platform());
  if (t.items == 0 || TensorView(a.sparse_indices).numel() == 0) return;
  // MIX 1:2 launch: block_dim (<= the AIC count) groups of 1 AIC + 2 AIVs. The workspace: one
  // check slot per AIV, then two GM score slots per AIC and the partial lists of split items.
  const npu::LaunchBuffers b = npu::launch_buffers(kOp, t, kernel_workspace_bytes(t), ctx, records);
  submit_npu_work(ctx, [=] {
    lightning_indexer_launch(static_cast<uint32_t>(t.block_dim), b.stream, gm(a.query.data), gm(a.key.data),
                             gm(a.weights.data), gm_or_null(a.actual_seq_lengths_query),
                             gm_or_null(a.actual_seq_lengths_key), gm_or_null(a.block_table),
                             gm(a.sparse_indices.data), gm_or_null(a.sparse_values), b.workspace, b.record,
                             b.tiling);
  });
  npu::end_call(kOp, b.stream, &records);
}

}  // namespace aop::lightning_indexer
