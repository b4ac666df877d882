// Element conversion to float32 of the lightning indexers' CPU kernels (float16, bfloat16 and
// float32 inputs; lightning_indexer_quant's weights and dequant scales too).
#pragma once
#include <cstdint>
#include <cstring>

#include "ascend_ops/tensor.h"

namespace aop::lightning_indexer {

inline float from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline float bf16_to_float(uint16_t h) { return from_bits(static_cast<uint32_t>(h) << 16); }

inline float fp16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return from_bits(sign | 0x7f800000u | (mant << 13));           // inf / nan
  if (exp != 0) return from_bits(sign | ((exp + 112) << 23) | (mant << 13));      // normal
  if (mant == 0) return from_bits(sign);                                           // zero
  const float sub = static_cast<float>(mant) * (1.0f / 16777216.0f);              // subnormal: mant * 2^-24
  return sign ? -sub : sub;
}

// n elements of dtype at src -> float32 at dst[i * dst_stride].
inline void to_float(aop_dtype dtype, const void* src, int64_t n, float* dst, int64_t dst_stride) {
  switch (dtype) {
    case AOP_DTYPE_FLOAT32: {
      const float* s = static_cast<const float*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i * dst_stride] = s[i];
      return;
    }
    case AOP_DTYPE_BFLOAT16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i * dst_stride] = bf16_to_float(s[i]);
      return;
    }
    default: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i * dst_stride] = fp16_to_float(s[i]);
      return;
    }
  }
}

}  // namespace aop::lightning_indexer
