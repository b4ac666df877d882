// The x86 int8 kernels (see int8_rows_x86.h). Per 16 (AVX-512) or 8 (AVX2) elements: widen k
// exactly (bfloat16 by a shift, float16 by vcvtph2ps), the quotient y = fl32(x / sc), one
// conversion rounding to nearest even, a saturating pack to int8.
//
// Why no clamp: with sc = fl32(amax / 127) a normal float32 and |x| <= amax, |y| <= 127 * (1 +
// 2^-22) < 127.5, so the rounded y is already in [-127, 127]; only a subnormal or zero sc (amax
// below about 127 * 2^-126) can give more, and those groups go to the generic loop (the kernels
// take 2^-100 <= sc <= 2^100 only, which also keeps 1 / sc and every product below normal).
//
// The quotient: float32 k divides (vdivps, IEEE). bfloat16 / float16 k use Markstein's
// correction, a third of the cost on the vector units: r = fl32(1 / sc), q = fl32(x * r),
// e = x - q * sc (exact, one FMA), y = fl32(q + e * r) (one FMA). It equals the IEEE quotient
// for every bfloat16 and float16 x and every such sc: the exhaustive test over all mantissas
// (tests/test_ikq_isa.py; scaling x and amax by powers of two scales every step exactly).
//
// The rounding: AVX-512 names it in the instruction (no MXCSR dependence); AVX2's vcvtps2dq uses
// the MXCSR mode, round to nearest even by default, as the generic loop's 1.5 * 2^23 trick does.
#include "host/int8_rows_x86.h"

#include <cstdlib>
#include <cstring>

#include "ascend_ops/cpu_isa.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define AOP_IKQ_X86 1
#endif

namespace aop::indexer_k_quant_and_cache::x86 {
namespace {

bool sc_in_range(float sc) { return sc >= 0x1p-100f && sc <= 0x1p100f; }

#ifdef AOP_IKQ_X86

// ---- AVX-512 (x86-64-v4's AVX512F) ----
#define AOP_IKQ_AVX512 __attribute__((target("avx512f,avx512bw,fma,f16c,avx2")))

AOP_IKQ_AVX512 inline __m512 widen16(const uint16_t* s, aop_dtype dtype) {
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
  if (dtype == AOP_DTYPE_FLOAT16) return _mm512_cvtph_ps(h);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

AOP_IKQ_AVX512 inline void store16(__m512 y, int8_t* q) {
  const __m512i v = _mm512_cvt_roundps_epi32(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm512_cvtsepi32_epi8(v));
}

template <aop_dtype kDtype>
AOP_IKQ_AVX512 bool avx512_half(const void* src, float sc, int64_t n, int8_t* q) {
  if (n % 16 != 0 || !sc_in_range(sc)) return false;
  const uint16_t* s = static_cast<const uint16_t*>(src);
  const __m512 vs = _mm512_set1_ps(sc), vr = _mm512_set1_ps(1.0f / sc);
  for (int64_t i = 0; i < n; i += 16) {
    const __m512 x = widen16(s + i, kDtype);
    const __m512 y0 = _mm512_mul_ps(x, vr);
    const __m512 e = _mm512_fnmadd_ps(y0, vs, x);
    store16(_mm512_fmadd_ps(e, vr, y0), q + i);
  }
  return true;
}

// bfloat16, 64 elements per step: the widening by interleaving zero words below each element
// (unpacklo / unpackhi per 128-bit lane: the float32 values, lane-interleaved), the quotients,
// then the two saturating packs put each lane's elements back in order and one permute of 8-byte
// pieces restores the row's order: fewer instructions than widen16 + vpmovsdb per 16 elements.
AOP_IKQ_AVX512 inline __m512 quotient(__m512 x, __m512 vs, __m512 vr) {
  const __m512 y0 = _mm512_mul_ps(x, vr);
  return _mm512_fmadd_ps(_mm512_fnmadd_ps(y0, vs, x), vr, y0);
}

AOP_IKQ_AVX512 inline __m512i rounded(__m512 y) {
  return _mm512_cvt_roundps_epi32(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

AOP_IKQ_AVX512 bool avx512_bf16(const void* src, float sc, int64_t n, int8_t* q) {
  if (n % 64 != 0) return avx512_half<AOP_DTYPE_BFLOAT16>(src, sc, n, q);
  if (!sc_in_range(sc)) return false;
  const uint16_t* s = static_cast<const uint16_t*>(src);
  const __m512 vs = _mm512_set1_ps(sc), vr = _mm512_set1_ps(1.0f / sc);
  const __m512i zero = _mm512_setzero_si512();
  // lane L of the packed bytes holds a[8L, 8L + 8) then b[8L, 8L + 8): 8-byte pieces 0 2 4 6 1 3 5 7
  const __m512i order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
  for (int64_t i = 0; i < n; i += 64) {
    const __m512i a = _mm512_loadu_si512(s + i), b = _mm512_loadu_si512(s + i + 32);
    const __m512i a_lo = rounded(quotient(_mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, a)), vs, vr));
    const __m512i a_hi = rounded(quotient(_mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, a)), vs, vr));
    const __m512i b_lo = rounded(quotient(_mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, b)), vs, vr));
    const __m512i b_hi = rounded(quotient(_mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, b)), vs, vr));
    const __m512i bytes = _mm512_packs_epi16(_mm512_packs_epi32(a_lo, a_hi), _mm512_packs_epi32(b_lo, b_hi));
    _mm512_storeu_si512(q + i, _mm512_permutexvar_epi64(order, bytes));
  }
  return true;
}

AOP_IKQ_AVX512 bool avx512_f32(const void* src, float sc, int64_t n, int8_t* q) {
  if (n % 16 != 0 || !sc_in_range(sc)) return false;
  const float* s = static_cast<const float*>(src);
  const __m512 vs = _mm512_set1_ps(sc);
  for (int64_t i = 0; i < n; i += 16) store16(_mm512_div_ps(_mm512_loadu_ps(s + i), vs), q + i);
  return true;
}

AOP_IKQ_AVX512 int32_t avx512_abs_max_bits16(const uint16_t* s, int64_t n) {
  if (n % 32 != 0) return -1;
  const __m512i magnitude = _mm512_set1_epi16(0x7FFF);
  __m512i m = _mm512_setzero_si512();
  for (int64_t i = 0; i < n; i += 32) m = _mm512_max_epu16(m, _mm512_and_si512(_mm512_loadu_si512(s + i), magnitude));
  const __m256i h = _mm256_max_epu16(_mm512_castsi512_si256(m), _mm512_extracti64x4_epi64(m, 1));
  const __m128i q = _mm_max_epu16(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
  // the max of 8 uint16: the min of their complements (one phminposuw)
  const __m128i ones = _mm_set1_epi16(-1);
  return 0xFFFF & ~_mm_cvtsi128_si32(_mm_minpos_epu16(_mm_xor_si128(q, ones)));
}

// ---- AVX2 + FMA + F16C (x86-64-v3) ----
#define AOP_IKQ_AVX2 __attribute__((target("avx2,fma,f16c")))

AOP_IKQ_AVX2 inline __m256 widen8(const uint16_t* s, aop_dtype dtype) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
  if (dtype == AOP_DTYPE_FLOAT16) return _mm256_cvtph_ps(h);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

// 32 quotients -> 32 int8 codes in order: two saturating packs work per 128-bit lane, the
// permute puts the 4-byte groups back in order.
AOP_IKQ_AVX2 inline void store32(const __m256 y[4], int8_t* q) {
  const __m256i a = _mm256_packs_epi32(_mm256_cvtps_epi32(y[0]), _mm256_cvtps_epi32(y[1]));
  const __m256i b = _mm256_packs_epi32(_mm256_cvtps_epi32(y[2]), _mm256_cvtps_epi32(y[3]));
  const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(a, b), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), bytes);
}

template <aop_dtype kDtype>
AOP_IKQ_AVX2 bool avx2_half(const void* src, float sc, int64_t n, int8_t* q) {
  if (n % 32 != 0 || !sc_in_range(sc)) return false;
  const uint16_t* s = static_cast<const uint16_t*>(src);
  const __m256 vs = _mm256_set1_ps(sc), vr = _mm256_set1_ps(1.0f / sc);
  for (int64_t i = 0; i < n; i += 32) {
    __m256 y[4];
    for (int j = 0; j < 4; ++j) {
      const __m256 x = widen8(s + i + 8 * j, kDtype);
      const __m256 y0 = _mm256_mul_ps(x, vr);
      const __m256 e = _mm256_fnmadd_ps(y0, vs, x);
      y[j] = _mm256_fmadd_ps(e, vr, y0);
    }
    store32(y, q + i);
  }
  return true;
}

AOP_IKQ_AVX2 bool avx2_f32(const void* src, float sc, int64_t n, int8_t* q) {
  if (n % 32 != 0 || !sc_in_range(sc)) return false;
  const float* s = static_cast<const float*>(src);
  const __m256 vs = _mm256_set1_ps(sc);
  for (int64_t i = 0; i < n; i += 32) {
    __m256 y[4];
    for (int j = 0; j < 4; ++j) y[j] = _mm256_div_ps(_mm256_loadu_ps(s + i + 8 * j), vs);
    store32(y, q + i);
  }
  return true;
}

Isa cpu_isa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx2") &&
      __builtin_cpu_supports("fma")) {
    return Isa::kAvx512;  // every AVX-512 CPU has F16C
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;  // F16C comes with both
  return Isa::kBaseline;
}

#else
Isa cpu_isa() { return Isa::kBaseline; }
#endif

Isa capped(Isa best) {
  const int cap = cpu_isa_cap();
  const Isa limit = cap == kIsaBaseline ? Isa::kBaseline : cap == kIsaAvx2 ? Isa::kAvx2 : Isa::kAvx512;
  return static_cast<int>(limit) < static_cast<int>(best) ? limit : best;
}

}  // namespace

Isa isa() {
  static const Isa chosen = capped(cpu_isa());
  return chosen;
}

const char* isa_name(Isa isa) {
  return isa == Isa::kAvx512 ? "avx512" : isa == Isa::kAvx2 ? "avx2" : "baseline";
}

Int8Codes int8_codes(Isa isa, aop_dtype k_dtype) {
#ifdef AOP_IKQ_X86
  if (isa == Isa::kAvx512) {
    return k_dtype == AOP_DTYPE_BFLOAT16  ? &avx512_bf16
           : k_dtype == AOP_DTYPE_FLOAT16 ? &avx512_half<AOP_DTYPE_FLOAT16>
                                          : &avx512_f32;
  }
  if (isa == Isa::kAvx2) {
    return k_dtype == AOP_DTYPE_BFLOAT16  ? &avx2_half<AOP_DTYPE_BFLOAT16>
           : k_dtype == AOP_DTYPE_FLOAT16 ? &avx2_half<AOP_DTYPE_FLOAT16>
                                          : &avx2_f32;
  }
#endif
  (void)isa;
  (void)k_dtype;
  return nullptr;
}

AbsMaxBits16 abs_max_bits16(Isa isa) {
#ifdef AOP_IKQ_X86
  if (isa == Isa::kAvx512) return &avx512_abs_max_bits16;
#endif
  (void)isa;
  return nullptr;
}

}  // namespace aop::indexer_k_quant_and_cache::x86
