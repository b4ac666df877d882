// The load-time check of the common runtime's ABI number against the one a module was built with.
#pragma once
#include "ascend_ops/config.hpp"
#include "ascend_ops/error.hpp"
#include "ascend_ops/version.h"

AOP_NAMESPACE_BEGIN

// Call once when a module loads: a RuntimeError naming both versions if the loaded
// libascend_ops_common has another ABI number than the headers the module was built with.
inline void check_common_abi(const char* module_name) {
  check(aop_common_abi() == AOP_COMMON_ABI, AOP_RUNTIME_ERROR, module_name,
        " was built against ascend-op-common ", AOP_COMMON_VERSION_STRING, " (ABI ",
        AOP_COMMON_ABI, ") but the loaded libascend_ops_common is ", aop_common_version(),
        " (ABI ", aop_common_abi(), "); install a matching ascend-op-common");
}

AOP_NAMESPACE_END
