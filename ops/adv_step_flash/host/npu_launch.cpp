// The NPU backend: validation and tiling on the host (no data read), the tiling's device copy
// from common's operator cache, the AscendC kernel queued on the caller's stream through the
// adapter's task queue. No host synchronisation, no copy and no allocation in steady state.
// Built against CANN's acl/acl.h (AOP_WITH_NPU) or the simulated runtime's (AOP_WITH_NPU_SIM).
#include "acl/acl.h"
#include "ascend_ops/npu/device_tiling.hpp"
#include "ascend_ops/npu/npu_call.hpp"
#include "ascend_ops/platform.hpp"
#include "host/adv_step_flash.h"
#include "kernel/adv_step_flash_launch.h"

namespace aop::adv_step_flash {

void run_npu(const Args& a, const NpuContext& ctx) {
  constexpr const char* kOp = "advance_step_flashattn";
  npu::begin_call();
  validate(a);
  const AdvStepFlashTiling t = tiling(a, current_platform());
  auto stream = static_cast<aclrtStream>(ctx.stream);
  auto* tiling_on_device = static_cast<uint8_t*>(npu::device_tiling(kOp, t, ctx.device, stream));
  const auto gm = [](void* p) { return static_cast<uint8_t*>(p); };
  submit_npu_work(ctx, [=] {
    adv_step_flash_launch(static_cast<uint32_t>(t.block_dim), stream, gm(a.input_tokens.data),
                          gm(a.sampled_token_ids.data), gm(a.input_positions.data), gm(a.seq_lens.data),
                          gm(a.slot_mapping.data), gm(a.block_tables.data), tiling_on_device);
  });
  npu::end_call(kOp, stream);
}

}  // namespace aop::adv_step_flash
