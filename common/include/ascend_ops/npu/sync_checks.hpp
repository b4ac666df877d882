// The debug switch of the NPU path: ASCEND_OPS_NPU_SYNC_CHECKS=1 makes every NPU op call
// synchronous (adapters run the call's work at once instead of queuing it, and the op waits
// for the stream and raises its own error before returning). Read on every call (a getenv).
// No ACL here: torch_npu_context.hpp includes it too.
#pragma once
#include <cstdlib>
#include <cstring>

#include "ascend_ops/config.hpp"

AOP_NAMESPACE_BEGIN
namespace npu {

inline bool sync_checks() {
  const char* v = std::getenv("ASCEND_OPS_NPU_SYNC_CHECKS");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

}  // namespace npu
AOP_NAMESPACE_END
