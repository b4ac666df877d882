// The NPU backend: validation and tiling on the host (no data read), the tiling's device copy
// from common's operator cache, the AscendC kernel queued on the caller's stream through the
// adapter's task queue. No host synchronisation, no copy and no allocation in steady state.
// Built against CANN's acl/acl.h (AOP_WITH_NPU) or the simulated runtime's (AOP_WITH_NPU_SIM).
#include "acl/acl.h"
#include "ascend_ops/npu/device_tiling.hpp"
#include "ascend_ops/npu/npu_call.hpp"
#include "ascend_ops/platform.hpp"
#include "host/reshape_and_cache.h"
#include "kernel/reshape_and_cache_launch.h"

namespace aop::reshape_and_cache {

void run_npu(const Args& args, const NpuContext& ctx) {
  constexpr const char* kOp = "reshape_and_cache";
  npu::begin_call();
  const Args a = validated(args);
  if (a.slot_mapping.shape[0] == 0) return;
  const ReshapeAndCacheTiling t = tiling(a, current_platform());
  auto stream = static_cast<aclrtStream>(ctx.stream);
  auto* tiling_on_device = static_cast<uint8_t*>(npu::device_tiling(kOp, t, ctx.device, stream));
  const auto gm = [](void* p) { return static_cast<uint8_t*>(p); };
  submit_npu_work(ctx, [=] {
    reshape_and_cache_launch(static_cast<uint32_t>(t.block_dim), stream, gm(a.key.data),
                             a.has_value ? gm(a.value.data) : nullptr, gm(a.key_cache.data),
                             a.has_value ? gm(a.value_cache.data) : nullptr, gm(a.slot_mapping.data),
                             tiling_on_device);
  });
  npu::end_call(kOp, stream);
}

}  // namespace aop::reshape_and_cache
