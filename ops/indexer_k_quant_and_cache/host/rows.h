// One token's row of k widened to float32 (exact), and the group abs-max of a float32 row: what the
// CPU kernel and the host data check both read. Loops the compiler vectorises.
#pragma once
#include <cstdint>
#include <cstring>

#include "ascend_ops/dtype.h"

namespace aop::indexer_k_quant_and_cache::rows {

inline void widen(const void* src, aop_dtype dtype, int64_t n, float* dst) {
  if (dtype == AOP_DTYPE_FLOAT32) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
  } else if (dtype == AOP_DTYPE_FLOAT16) {
    // Exact and vectorisable without F16C: the magnitude's bits moved into a float32's place
    // (exponent rebias by a multiply by 2^112, which also normalises subnormals), then the sign;
    // inf / NaN (exponent 31) fixed up after.
    const uint16_t* s = static_cast<const uint16_t*>(src);
    uint32_t* d = reinterpret_cast<uint32_t*>(dst);
    for (int64_t i = 0; i < n; ++i) {
      float f;
      const uint32_t m = static_cast<uint32_t>(s[i] & 0x7FFFu) << 13;
      std::memcpy(&f, &m, sizeof f);
      f *= 0x1p112f;
      uint32_t b;
      std::memcpy(&b, &f, sizeof b);
      d[i] = b | (static_cast<uint32_t>(s[i] & 0x8000u) << 16);
    }
    for (int64_t i = 0; i < n; ++i) {
      if ((s[i] & 0x7C00u) == 0x7C00u) d[i] = (static_cast<uint32_t>(s[i] & 0x8000u) << 16) | 0x7F800000u |
                                              (static_cast<uint32_t>(s[i] & 0x3FFu) << 13);
    }
  } else {  // bfloat16: the high half of a float32
    const uint16_t* s = static_cast<const uint16_t*>(src);
    uint32_t* d = reinterpret_cast<uint32_t*>(dst);
    for (int64_t i = 0; i < n; ++i) d[i] = static_cast<uint32_t>(s[i]) << 16;
  }
}

// max |x| over x[0, n) (n > 0), as float32 (the sign bit cleared, so -0.0 counts as 0).
inline float abs_max(const float* x, int64_t n) {
  const uint32_t* b = reinterpret_cast<const uint32_t*>(x);
  uint32_t m = 0;  // non-negative floats order as their bits
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t a = b[i] & 0x7FFFFFFFu;
    m = a > m ? a : m;
  }
  float out;
  std::memcpy(&out, &m, sizeof out);
  return out;
}

}  // namespace aop::indexer_k_quant_and_cache::rows
