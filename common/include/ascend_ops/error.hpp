// aop::Error: the C++ side of aop_error. Adapters map status() to ValueError, TypeError,
// IndexError, RuntimeError or MemoryError.
#pragma once
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "ascend_ops/config.hpp"
#include "ascend_ops/error.h"

AOP_NAMESPACE_BEGIN

class Error : public std::runtime_error {
 public:
  Error(aop_status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  aop_status status() const noexcept { return status_; }
  const char* status_name() const noexcept { return aop_status_name(status_); }

 private:
  aop_status status_;
};

// Concatenates its arguments with operator<<: str("x should be ", 3, "-D, got ", shape).
template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

// Throws Error(status, message built from args) — for host-side validation.
template <class... Args>
[[noreturn]] void fail(aop_status status, const Args&... args) {
  throw Error(status, str(args...));
}

// Throws Error(status, message) unless `condition` holds. The message is built only on failure.
template <class... Args>
void check(bool condition, aop_status status, const Args&... args) {
  if (!condition) fail(status, args...);
}

// A cleared aop_error to pass to the C interface.
inline aop_error make_error() noexcept {
  aop_error err;
  err.status = AOP_OK;
  err.message[0] = '\0';
  return err;
}

// Throws Error when a C call reported one; the message falls back to the status name.
inline void throw_if(aop_status status, const aop_error& err) {
  if (status == AOP_OK) return;
  const std::string message = err.message[0] != '\0' ? std::string(err.message)
                                                     : std::string(aop_status_name(status));
  throw Error(status, message);
}

// Fills an aop_error from a caught exception, for C entry points written in C++ (the
// Graph-mode entry of an op): truncated to fit, always NUL-terminated.
inline void set_error(aop_error* err, aop_status status, const std::string& message) noexcept {
  if (err == nullptr) return;
  err->status = status;
  const size_t n = message.size() < AOP_ERROR_MESSAGE_BYTES - 1 ? message.size()
                                                                : AOP_ERROR_MESSAGE_BYTES - 1;
  std::memcpy(err->message, message.data(), n);
  err->message[n] = '\0';
}

AOP_NAMESPACE_END
