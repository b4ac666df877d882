// The version and ABI number of the loaded library, compared by ops when they load.
#include "ascend_ops/version.h"

extern "C" const char* aop_common_version(void) noexcept { return AOP_COMMON_VERSION_STRING; }

extern "C" int aop_common_abi(void) noexcept { return AOP_COMMON_ABI; }
