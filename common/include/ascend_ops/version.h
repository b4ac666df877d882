// Version of the common runtime and the ABI number ops are built against.
#pragma once
#include "ascend_ops/export.h"

#define AOP_COMMON_VERSION_MAJOR 0
#define AOP_COMMON_VERSION_MINOR 1
#define AOP_COMMON_VERSION_PATCH 0
#define AOP_COMMON_VERSION_STRING "0.1.0"
// Bumped on any incompatible change of the exported C interface or its structs.
#define AOP_COMMON_ABI 1

AOP_EXTERN_C_BEGIN
AOP_API const char* aop_common_version(void) AOP_NOEXCEPT;  // "0.1.0"
AOP_API int aop_common_abi(void) AOP_NOEXCEPT;              // AOP_COMMON_ABI of the library
AOP_EXTERN_C_END
