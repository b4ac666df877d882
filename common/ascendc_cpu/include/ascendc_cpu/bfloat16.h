// bfloat16_t: 1 sign, 8 exponent, 7 mantissa bits. Arithmetic goes through float; conversion
// from float rounds to nearest even (NaN stays NaN).
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

struct bfloat16_t {
  uint16_t bits = 0;

  bfloat16_t() = default;
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
  constexpr bfloat16_t(T v) : bits(FromFloat(static_cast<float>(v))) {}  // NOLINT: implicit like the NPU type
  operator float() const { return ToFloat(bits); }  // NOLINT

  static bfloat16_t FromBits(uint16_t b) {
    bfloat16_t r;
    r.bits = b;
    return r;
  }
  static constexpr uint16_t FromFloat(float f) {
    const uint32_t u = __builtin_bit_cast(uint32_t, f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet NaN
    const uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>((u + rounding) >> 16);
  }
  static float ToFloat(uint16_t b) {
    const uint32_t u = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  }
};
