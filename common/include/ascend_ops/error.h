// Errors across the C boundary: a status code plus a message buffer. The header-only C++ part
// turns them into aop::Error, which adapters map to ValueError / TypeError / IndexError.
#pragma once
#include <stddef.h>
#include "ascend_ops/export.h"

typedef enum aop_status {
  AOP_OK = 0,
  AOP_VALUE_ERROR = 1,    // bad shape, bad value            -> ValueError
  AOP_TYPE_ERROR = 2,     // wrong dtype                     -> TypeError
  AOP_INDEX_ERROR = 3,    // index out of range              -> IndexError
  AOP_RUNTIME_ERROR = 4,  // anything else                   -> RuntimeError
  AOP_MEMORY_ERROR = 5,   // allocation failed or pool bound -> MemoryError
} aop_status;

#define AOP_ERROR_MESSAGE_BYTES 1024

typedef struct aop_error {
  aop_status status;
  char message[AOP_ERROR_MESSAGE_BYTES];  // NUL-terminated, truncated if longer
} aop_error;

AOP_EXTERN_C_BEGIN
AOP_API const char* aop_status_name(aop_status status) AOP_NOEXCEPT;  // "ValueError", ...
AOP_EXTERN_C_END
