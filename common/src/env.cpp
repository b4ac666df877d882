// Reading the ASCEND_OPS_* environment variables (cache capacities, pool bound, platform).
#include <cstdio>
#include <cstdlib>

#include "env_internal.h"

namespace aop_internal {

const char* env_string(const char* name) noexcept {
  const char* value = std::getenv(name);
  return (value != nullptr && value[0] != '\0') ? value : nullptr;
}

namespace {
bool parse_uint(const char* text, bool allow_suffix, uint64_t* out) {
  uint64_t value = 0;
  const char* p = text;
  if (*p < '0' || *p > '9') return false;
  for (; *p >= '0' && *p <= '9'; ++p) {
    const uint64_t digit = static_cast<uint64_t>(*p - '0');
    if (value > (UINT64_MAX - digit) / 10) return false;
    value = value * 10 + digit;
  }
  int shift = 0;
  if (allow_suffix && *p != '\0') {
    switch (*p) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      default: return false;
    }
    ++p;
  }
  if (*p != '\0') return false;
  if (shift > 0 && value > (UINT64_MAX >> shift)) return false;
  *out = value << shift;
  return true;
}
}  // namespace

uint64_t env_uint(const char* name, uint64_t fallback, bool allow_suffix) noexcept {
  const char* text = env_string(name);
  if (text == nullptr) return fallback;
  uint64_t value = 0;
  if (parse_uint(text, allow_suffix, &value)) return value;
  std::fprintf(stderr,
               "ascend_ops_common: ignoring %s='%s': expected a non-negative integer%s; "
               "using the default %llu\n",
               name, text, allow_suffix ? " (optionally with a K, M or G suffix)" : "",
               static_cast<unsigned long long>(fallback));
  return fallback;
}

}  // namespace aop_internal
