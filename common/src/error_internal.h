// Internal: filling aop_error and turning C++ exceptions into statuses at the C boundary.
#pragma once
#include <exception>
#include <new>

#include "ascend_ops/error.h"

namespace aop_internal {

// Sets `err` (if not NULL) to AOP_OK with an empty message.
void clear_error(aop_error* err) noexcept;

// printf-style; the message is truncated to fit AOP_ERROR_MESSAGE_BYTES (ending in "...").
// With a NULL `err` the message goes to stderr so a failure is never silent.
void set_error(aop_error* err, aop_status status, const char* fmt, ...) noexcept
    __attribute__((format(printf, 3, 4)));

// Runs `body`; an escaping exception becomes an error in `err` and `fallback` is returned.
template <class R, class F>
R guarded(aop_error* err, R fallback, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    set_error(err, AOP_MEMORY_ERROR, "ascend_ops_common: out of host memory");
  } catch (const std::exception& e) {
    set_error(err, AOP_RUNTIME_ERROR, "ascend_ops_common: internal error: %s", e.what());
  } catch (...) {
    set_error(err, AOP_RUNTIME_ERROR, "ascend_ops_common: internal error (unknown exception)");
  }
  return fallback;
}

// Copies `src` into a fixed char array, truncating and always NUL-terminating.
void copy_name(char* dst, size_t dst_bytes, const char* src) noexcept;

}  // namespace aop_internal
