// Platform presets for Atlas A2 / A3 parts and the platform ops tile for.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "ascend_ops/error.h"

#define AOP_PLATFORM_NAME_BYTES 32

typedef struct aop_platform {
  char soc[AOP_PLATFORM_NAME_BYTES];     // "Ascend910B2"
  char family[AOP_PLATFORM_NAME_BYTES];  // "Atlas A2" / "Atlas A3"
  int32_t aiv_cores;                     // AI vector cores
  int32_t aic_cores;                     // AI cube cores
  int64_t ub_bytes;                      // unified buffer per vector core
  int64_t l1_bytes;
  int64_t l0a_bytes;
  int64_t l0b_bytes;
  int64_t l0c_bytes;
  int32_t is_real_device;  // 1 if queried from a device through CANN, 0 for a preset
} aop_platform;

AOP_EXTERN_C_BEGIN
AOP_API size_t aop_platform_preset_count(void) AOP_NOEXCEPT;
AOP_API int aop_platform_preset_at(size_t index, aop_platform* out) AOP_NOEXCEPT;  // 0 if out of range
// Case-insensitive lookup by soc name; AOP_VALUE_ERROR listing the known names otherwise.
AOP_API aop_status aop_platform_preset(const char* soc, aop_platform* out, aop_error* err) AOP_NOEXCEPT;
// The platform to tile for: the real device where CANN found one, else the preset named by
// ASCEND_OPS_PLATFORM, else Ascend910B2.
AOP_API aop_status aop_platform_current(aop_platform* out, aop_error* err) AOP_NOEXCEPT;
AOP_EXTERN_C_END
