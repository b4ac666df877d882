// k's element types read straight from their bits: the exact float32 value of one element, and the
// abs-max of a group from the bits (no widened copy of the row). What the CPU kernel and the host
// data check both read; every loop over a group vectorises (no libcall, no branch).
#pragma once
#include <cstdint>
#include <cstring>

// Inlined into the callers' per-ISA clones (a call would run the baseline build of the loop).
#if defined(__GNUC__)
#define AOP_IKQ_INLINE inline __attribute__((always_inline))
#else
#define AOP_IKQ_INLINE inline
#endif

namespace aop::indexer_k_quant_and_cache::rows {

inline float float_of(uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}
inline uint32_t bits_of(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// bfloat16: the high half of a float32.
struct Bf16 {
  using Bits = uint16_t;
  static constexpr Bits kMagnitude = 0x7FFFu;
  static AOP_IKQ_INLINE float widen(Bits h) { return float_of(static_cast<uint32_t>(h) << 16); }
};

// float16, without F16C: the magnitude's bits moved into a float32's place, the exponent rebiased
// by a multiply by 2^112 (which also normalises subnormals), then the sign; inf / NaN (exponent 31)
// by a select.
struct F16 {
  using Bits = uint16_t;
  static constexpr Bits kMagnitude = 0x7FFFu;
  static AOP_IKQ_INLINE float widen(Bits h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t magnitude = static_cast<uint32_t>(h & 0x7FFFu) << 13;
    const uint32_t finite = bits_of(float_of(magnitude) * 0x1p112f) | sign;
    const uint32_t special = sign | 0x7F800000u | (magnitude & 0x7FFFFFu);
    return float_of((h & 0x7C00u) == 0x7C00u ? special : finite);
  }
};

struct F32 {
  using Bits = uint32_t;
  static constexpr Bits kMagnitude = 0x7FFFFFFFu;
  static AOP_IKQ_INLINE float widen(Bits b) { return float_of(b); }
};

// max |x| over s[0, n) (n > 0) as float32: non-negative values (not NaN) order as their magnitude
// bits, so the max is taken on the bits (-0.0 counts as 0) and only it is widened.
template <class S>
AOP_IKQ_INLINE float abs_max(const typename S::Bits* s, int64_t n) {
  typename S::Bits m = 0;
  for (int64_t i = 0; i < n; ++i) {
    const typename S::Bits a = s[i] & S::kMagnitude;
    m = a > m ? a : m;
  }
  return S::widen(m);
}

}  // namespace aop::indexer_k_quant_and_cache::rows
