// What every op's run_npu hands its kernel launch besides the tensors: the caller's stream, the
// tiling's device copy (common's operator cache), the call's workspace (the framework's
// allocator) and the op's device error record.
#pragma once
#include <cstddef>
#include <cstdint>

#include "acl/acl.h"
#include "ascend_ops/npu/device_tiling.hpp"
#include "ascend_ops/npu/error_record.hpp"
#include "ascend_ops/npu_context.hpp"

AOP_NAMESPACE_BEGIN
namespace npu {

struct LaunchBuffers {
  aclrtStream stream;
  uint8_t* tiling;
  uint8_t* workspace;
  uint8_t* record;
};

template <class T>
LaunchBuffers launch_buffers(const char* op, const T& tiling, size_t workspace_bytes, const NpuContext& ctx,
                             ErrorRecords& records) {
  auto stream = static_cast<aclrtStream>(ctx.stream);
  auto* tiling_on_device = static_cast<uint8_t*>(device_tiling(op, tiling, ctx.device, stream));
  auto* workspace = static_cast<uint8_t*>(ctx.workspace(workspace_bytes));
  auto* record = static_cast<uint8_t*>(records.device_record(ctx.device));
  return LaunchBuffers{stream, tiling_on_device, workspace, record};
}

}  // namespace npu
AOP_NAMESPACE_END
