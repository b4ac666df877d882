// Internal: reading the ASCEND_OPS_* environment variables.
#pragma once
#include <cstdint>

namespace aop_internal {

// The value of `name`, or NULL if it is unset or empty.
const char* env_string(const char* name) noexcept;

// `name` parsed as a non-negative integer, with an optional K, M or G suffix (powers of 1024)
// when `allow_suffix`. Unset or empty gives `fallback`; a malformed value gives `fallback`
// and a warning on stderr that names the variable, the value and the default used.
uint64_t env_uint(const char* name, uint64_t fallback, bool allow_suffix) noexcept;

}  // namespace aop_internal
