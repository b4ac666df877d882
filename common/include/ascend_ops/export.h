// Symbol visibility for libascend_ops_common. Only the C interface declared with AOP_API is
// exported; everything else stays hidden so two C++ ABIs can share the library.
#pragma once

#if defined(AOP_BUILDING_COMMON)
#define AOP_API __attribute__((visibility("default")))
#else
#define AOP_API
#endif

#ifdef __cplusplus
#define AOP_EXTERN_C_BEGIN extern "C" {
#define AOP_EXTERN_C_END }
#define AOP_NOEXCEPT noexcept
#else
#define AOP_EXTERN_C_BEGIN
#define AOP_EXTERN_C_END
#define AOP_NOEXCEPT
#endif
