// NPU glue shared by every op's run_npu (npu/run_kernel.hpp) (built only against an acl/acl.h: CANN's,
// or the simulated runtime's in common/ascend_sim). An ACL status that is not ACL_SUCCESS
// becomes the op's RuntimeError naming the call.
#pragma once
#include <string>

#include "acl/acl.h"
#include "ascend_ops/error.hpp"

AOP_NAMESPACE_BEGIN
namespace npu {

inline void acl_check(aclError rc, const char* op, const char* what) {
  if (rc != ACL_SUCCESS) {
    throw Error(AOP_RUNTIME_ERROR, std::string(op) + ": " + what + " failed with aclError " + std::to_string(rc));
  }
}

}  // namespace npu
AOP_NAMESPACE_END
