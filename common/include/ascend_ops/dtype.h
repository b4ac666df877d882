// Element types known to every op and adapter.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "ascend_ops/export.h"

typedef enum aop_dtype {
  AOP_DTYPE_FLOAT16 = 0,
  AOP_DTYPE_BFLOAT16 = 1,
  AOP_DTYPE_FLOAT32 = 2,
  AOP_DTYPE_INT8 = 3,
  AOP_DTYPE_INT32 = 4,
  AOP_DTYPE_INT64 = 5,
  AOP_DTYPE_UINT8 = 6,
  AOP_DTYPE_BOOL = 7,
  AOP_DTYPE_INT16 = 8,
  AOP_DTYPE_FLOAT64 = 9,
  AOP_DTYPE_COUNT = 10,
} aop_dtype;

AOP_EXTERN_C_BEGIN
AOP_API size_t aop_dtype_size(aop_dtype dtype) AOP_NOEXCEPT;       // 0 for an unknown value
AOP_API const char* aop_dtype_name(aop_dtype dtype) AOP_NOEXCEPT;  // "float16", ...; "unknown"
AOP_EXTERN_C_END
