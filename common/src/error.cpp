// aop_status names and the internal helpers that fill aop_error.
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "error_internal.h"

extern "C" const char* aop_status_name(aop_status status) noexcept {
  switch (status) {
    case AOP_OK: return "OK";
    case AOP_VALUE_ERROR: return "ValueError";
    case AOP_TYPE_ERROR: return "TypeError";
    case AOP_INDEX_ERROR: return "IndexError";
    case AOP_RUNTIME_ERROR: return "RuntimeError";
    case AOP_MEMORY_ERROR: return "MemoryError";
  }
  return "UnknownError";
}

namespace aop_internal {

void clear_error(aop_error* err) noexcept {
  if (err != nullptr) {
    err->status = AOP_OK;
    err->message[0] = '\0';
  }
}

void set_error(aop_error* err, aop_status status, const char* fmt, ...) noexcept {
  char local[AOP_ERROR_MESSAGE_BYTES];
  char* out = err != nullptr ? err->message : local;
  va_list args;
  va_start(args, fmt);
  const int needed = std::vsnprintf(out, AOP_ERROR_MESSAGE_BYTES, fmt, args);
  va_end(args);
  if (needed < 0) {
    std::snprintf(out, AOP_ERROR_MESSAGE_BYTES, "%s (message could not be formatted)",
                  aop_status_name(status));
  } else if (needed >= AOP_ERROR_MESSAGE_BYTES) {
    std::memcpy(out + AOP_ERROR_MESSAGE_BYTES - 4, "...", 4);  // mark the truncation
  }
  if (err != nullptr) {
    err->status = status;
  } else {
    std::fprintf(stderr, "ascend_ops_common: %s: %s\n", aop_status_name(status), out);
  }
}

void copy_name(char* dst, size_t dst_bytes, const char* src) noexcept {
  if (dst_bytes == 0) return;
  size_t n = 0;
  if (src != nullptr) {
    while (n + 1 < dst_bytes && src[n] != '\0') ++n;
    std::memcpy(dst, src, n);
  }
  std::memset(dst + n, 0, dst_bytes - n);
}

}  // namespace aop_internal
