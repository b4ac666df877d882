// The contract's scalar rules (shared/specs/quantized_cache_write.md section 2), bit-exact in
// float32: the group scales, the E4M3FN encode and the int8 code. Host code only (the CPU kernel
// and the data checks); the AscendC kernel has its own vector form of the int8 rule.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "host/rows.h"  // AOP_IKQ_INLINE

namespace aop::indexer_k_quant_and_cache::rules {

inline uint32_t bits_of(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
inline float float_of(uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// Split int8: sc = fl32(amax / 127), 1 for a zero row.
inline float int8_scale(float amax) { return amax == 0.0f ? 1.0f : amax / 127.0f; }

// Fused: sc = fl32(max(amax, 1e-4) / 448); ue8m0: the next power of two >= sc, from the bits
// (exact: the exponent of sc, one more if its mantissa is not zero; sc is a positive normal).
inline float fp8_scale(float amax, bool ue8m0) {
  const float sc = std::fmax(amax, 1e-4f) / 448.0f;
  if (!ue8m0) return sc;
  const uint32_t b = bits_of(sc);
  const uint32_t exponent = (b >> 23) + ((b & 0x7FFFFFu) != 0 ? 1u : 0u);
  return float_of(exponent << 23);
}

// The float16 overflow of a stored scale: its nearest-even float16 rounding is infinite
// (65504 is the largest float16, 65520 the midpoint to the next power of two).
inline bool float16_overflows(float sc) { return !(sc < 65520.0f); }

// q[i] = clamp(round_half_even(fl32(x[i] / sc)), -128, 127), x[i] the widened s[i], i < n. One
// loop the compiler vectorises on every x86-64 / AArch64 build: the clamps first, in float (the
// bounds are integers, so clamp(round(y)) = round(clamp(y)); +-inf clamp too), then the rounding
// by adding and subtracting 1.5 * 2^23 (nearest even for |y| <= 2^22 in the default rounding mode),
// then an exact conversion. NaN is outside the contract.
template <class S>
AOP_IKQ_INLINE void int8_codes(const typename S::Bits* s, float sc, int64_t n, int8_t* q) {
  constexpr float kMagic = 12582912.0f;
  for (int64_t i = 0; i < n; ++i) {
    float y = S::widen(s[i]) / sc;
    y = y > -128.0f ? y : -128.0f;  // first: NaN (0 / 0 when sc underflows to 0) -> -128, as before
    y = y < 127.0f ? y : 127.0f;
    y = (y + kMagic) - kMagic;
    q[i] = static_cast<int8_t>(static_cast<int32_t>(y));
  }
}

// E4M3FN byte of clamp(y, -448, 448): round to nearest even, subnormals (steps of 2^-9) included,
// -0.0 -> 0x80. y is not NaN. Both candidates are computed and one selected (no branch, no
// libcall), so a loop of it vectorises.
AOP_IKQ_INLINE uint8_t e4m3fn_code(float y) {
  constexpr float kMagic = 8388608.0f;  // 2^23: x + 2^23 - 2^23 rounds 0 <= x < 2^22 to nearest even
  const uint32_t sign = (bits_of(y) >> 24) & 0x80u;
  float a = std::fabs(y);
  a = a < 448.0f ? a : 448.0f;
  // below 2^-6: a subnormal (or zero), exactly a * 2^9 rounded to an integer (8 is the smallest
  // normal, 0x08)
  const uint32_t subnormal = static_cast<uint32_t>(static_cast<int32_t>((a * 512.0f + kMagic) - kMagic));
  // normal: the float32 mantissa rounded to 3 bits, nearest even; a carry moves into the exponent;
  // rebias 127 -> 7
  const uint32_t b = bits_of(a);
  const uint32_t normal = ((b + 0x7FFFFu + ((b >> 20) & 1u)) >> 20) - ((127u - 7u) << 3);
  return static_cast<uint8_t>(sign | (a < 0.015625f ? subnormal : normal));
}

// q[i] = e4m3fn_code(fl32(x[i] / sc)), x[i] the widened s[i], i < n.
template <class S>
AOP_IKQ_INLINE void e4m3fn_codes(const typename S::Bits* s, float sc, int64_t n, uint8_t* q) {
  for (int64_t i = 0; i < n; ++i) q[i] = e4m3fn_code(S::widen(s[i]) / sc);
}

}  // namespace aop::indexer_k_quant_and_cache::rules
