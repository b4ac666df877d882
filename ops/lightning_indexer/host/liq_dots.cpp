// The int8 score micro-kernel (host/liq_dots.h), key-major: keys are read where they lie in
// the cache (no repacking), the query row is packed once per row.
//
// AVX512-VNNI: q packed [ceil(D/4)][Gp] as 4 int8 per int32, 16 heads per vector; each key
// dword is broadcast and XORed with 0x80 (k + 128 as uint8, the unsigned operand of vpdpbusd),
// so the accumulator holds dot + 128 * sum_d q[h][d]: bias[h] subtracts it, exactly.
// AVX2: q packed [ceil(D/2)][Gp] as int16 pairs; the key row widened to int16 once, its pairs
// broadcast into vpmaddwd (exact int32). Baseline: plain int32 loops.
// The float part (ReLU, * wq, the lane sums, the 16-lane tree, * ks) is one fixed sequence of
// float32 multiplies and adds in every build (compiled with -ffp-contract=off).
#include "host/liq_dots.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "ascend_ops/cpu_isa.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace aop::lightning_indexer_quant {
namespace {

// part[0..15] -> the pairwise tree sum (lanes l and l + 8, then + 4, + 2, + 1).
inline float tree16(float* part) {
  for (int step = 8; step >= 1; step /= 2) {
    for (int l = 0; l < step; ++l) part[l] = part[l] + part[l + step];
  }
  return part[0];
}

// ---- baseline ----------------------------------------------------------------------------
void pack_baseline(const int8_t* q, int64_t G, int64_t D, int64_t Gp, int32_t* packed, int32_t* bias) {
  std::memcpy(packed, q, static_cast<size_t>(G * D));
  std::fill(bias, bias + Gp, 0);
}

void score_baseline(const int32_t* packed, const int32_t*, const float* wq, int64_t G, int64_t, int64_t D,
                    const int8_t* const* keys, const float* ks, int64_t n, float* scores) {
  const int8_t* q = reinterpret_cast<const int8_t*>(packed);
  for (int64_t j = 0; j < n; ++j) {
    const int8_t* k = keys[j];
    float part[kHeadLanes] = {};
    for (int64_t h = 0; h < G; ++h) {
      const int8_t* qh = q + h * D;
      int32_t dot = 0;
      for (int64_t d = 0; d < D; ++d) dot += static_cast<int32_t>(qh[d]) * static_cast<int32_t>(k[d]);
      const float prod = static_cast<float>(std::max(dot, 0)) * wq[h];
      part[h % kHeadLanes] = part[h % kHeadLanes] + prod;
    }
    scores[j] = tree16(part) * ks[j];
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
// ---- AVX2 --------------------------------------------------------------------------------
void pack_avx2(const int8_t* q, int64_t G, int64_t D, int64_t Gp, int32_t* packed, int32_t* bias) {
  const int64_t C = (D + 1) / 2;
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t h = 0; h < Gp; ++h) {
      const int16_t lo = h < G ? q[h * D + 2 * c] : 0;
      const int16_t hi = h < G && 2 * c + 1 < D ? q[h * D + 2 * c + 1] : 0;
      packed[c * Gp + h] = static_cast<int32_t>(static_cast<uint16_t>(lo) | (static_cast<uint32_t>(static_cast<uint16_t>(hi)) << 16));
    }
  }
  std::fill(bias, bias + Gp, 0);
}

// NK keys against every head: acc[k][v] over the 8-head vectors v of one 32-head chunk.
template <int NK, int HV>
__attribute__((target("avx2"), always_inline)) inline void avx2_chunk(const int32_t* packed, const int32_t* kw,
                                                                       int64_t C, int64_t Gp, int64_t h0,
                                                                       const float* wq, __m256* lo, __m256* hi) {
  __m256i acc[NK][HV];
  for (int k = 0; k < NK; ++k)
    for (int v = 0; v < HV; ++v) acc[k][v] = _mm256_setzero_si256();
  for (int64_t c = 0; c < C; ++c) {
    __m256i kb[NK];
    for (int k = 0; k < NK; ++k) kb[k] = _mm256_set1_epi32(kw[k * C + c]);
    for (int v = 0; v < HV; ++v) {
      const __m256i qv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(packed + c * Gp + h0 + 8 * v));
      for (int k = 0; k < NK; ++k) acc[k][v] = _mm256_add_epi32(acc[k][v], _mm256_madd_epi16(qv, kb[k]));
    }
  }
  for (int v = 0; v < HV; ++v) {
    const __m256 w = _mm256_loadu_ps(wq + h0 + 8 * v);
    for (int k = 0; k < NK; ++k) {
      const __m256 f = _mm256_cvtepi32_ps(_mm256_max_epi32(acc[k][v], _mm256_setzero_si256()));
      // head h0 + 8v lies in lanes 0-7 of its 16-head group for even v, 8-15 for odd v
      if (((h0 / 8 + v) & 1) == 0) {
        lo[k] = _mm256_add_ps(lo[k], _mm256_mul_ps(f, w));
      } else {
        hi[k] = _mm256_add_ps(hi[k], _mm256_mul_ps(f, w));
      }
    }
  }
}

__attribute__((target("avx2"))) inline float avx2_tree(__m256 lo, __m256 hi) {
  alignas(32) float part[kHeadLanes];
  _mm256_store_ps(part, lo);
  _mm256_store_ps(part + 8, hi);
  return tree16(part);
}

template <int NK>
__attribute__((target("avx2"))) void avx2_keys(const int32_t* packed, const float* wq, int64_t Gp, int64_t C,
                                               const int32_t* kw, __m256* lo, __m256* hi) {
  for (int k = 0; k < NK; ++k) lo[k] = hi[k] = _mm256_setzero_ps();
  for (int64_t h0 = 0; h0 < Gp; h0 += 32) {
    switch (std::min<int64_t>(4, (Gp - h0) / 8)) {
      case 4: avx2_chunk<NK, 4>(packed, kw, C, Gp, h0, wq, lo, hi); break;
      case 3: avx2_chunk<NK, 3>(packed, kw, C, Gp, h0, wq, lo, hi); break;
      default: avx2_chunk<NK, 2>(packed, kw, C, Gp, h0, wq, lo, hi); break;  // Gp is a multiple of 16
    }
  }
}

__attribute__((target("avx2"))) void score_avx2(const int32_t* packed, const int32_t*, const float* wq, int64_t,
                                                int64_t Gp, int64_t D, const int8_t* const* keys, const float* ks,
                                                int64_t n, float* scores) {
  const int64_t C = (D + 1) / 2;
  constexpr int NK = 2;
  thread_local std::vector<int16_t> widened;
  widened.assign(static_cast<size_t>(NK * 2 * C), 0);
  for (int64_t j = 0; j < n; j += NK) {
    const int nk = static_cast<int>(std::min<int64_t>(NK, n - j));
    for (int k = 0; k < nk; ++k) {
      for (int64_t d = 0; d < D; ++d) widened[k * 2 * C + d] = keys[j + k][d];
    }
    const int32_t* kw = reinterpret_cast<const int32_t*>(widened.data());
    __m256 lo[NK], hi[NK];
    if (nk == NK) {
      avx2_keys<NK>(packed, wq, Gp, C, kw, lo, hi);
    } else {
      avx2_keys<1>(packed, wq, Gp, C, kw, lo, hi);
    }
    for (int k = 0; k < nk; ++k) scores[j + k] = avx2_tree(lo[k], hi[k]) * ks[j + k];
  }
}

// ---- AVX512-VNNI -------------------------------------------------------------------------
#define AOP_LIQ_VNNI "avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2"

void pack_vnni(const int8_t* q, int64_t G, int64_t D, int64_t Gp, int32_t* packed, int32_t* bias) {
  const int64_t C = (D + 3) / 4;
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t h = 0; h < Gp; ++h) {
      uint32_t word = 0;
      for (int b = 0; b < 4; ++b) {
        const int64_t d = 4 * c + b;
        const int8_t v = h < G && d < D ? q[h * D + d] : 0;
        word |= static_cast<uint32_t>(static_cast<uint8_t>(v)) << (8 * b);
      }
      packed[c * Gp + h] = static_cast<int32_t>(word);
    }
  }
  for (int64_t h = 0; h < Gp; ++h) {
    int32_t sum = 0;
    for (int64_t d = 0; h < G && d < D; ++d) sum += q[h * D + d];
    bias[h] = 128 * sum;  // the +128 of every key byte, pad bytes included (their q is 0)
  }
}

// Key dword c of row k as uint8 (k + 128); bytes past D are 0 + 128 (their query bytes are 0).
inline int32_t key_word(const int8_t* k, int64_t c, int64_t D) {
  uint32_t word = 0;
  if (4 * c + 4 <= D) {
    std::memcpy(&word, k + 4 * c, 4);
  } else {
    for (int64_t b = 0; 4 * c + b < D; ++b) word |= static_cast<uint32_t>(static_cast<uint8_t>(k[4 * c + b])) << (8 * b);
  }
  return static_cast<int32_t>(word ^ 0x80808080u);
}

template <int NK, int HV>
__attribute__((target(AOP_LIQ_VNNI), always_inline)) inline void vnni_chunk(const int32_t* packed, const int32_t* bias,
                                                                             const float* wq, int64_t Gp, int64_t D,
                                                                             int64_t h0, const int8_t* const* k,
                                                                             __m512* part) {
  const int64_t C = (D + 3) / 4, full = D / 4;
  __m512i acc[NK][HV];
  for (int i = 0; i < NK; ++i)
    for (int v = 0; v < HV; ++v) acc[i][v] = _mm512_setzero_si512();
  const __m512i flip = _mm512_set1_epi32(static_cast<int32_t>(0x80808080u));
  for (int64_t c = 0; c < C; ++c) {
    __m512i kb[NK];
    for (int i = 0; i < NK; ++i) {
      if (c < full) {
        int32_t w;
        std::memcpy(&w, k[i] + 4 * c, 4);
        kb[i] = _mm512_xor_si512(_mm512_set1_epi32(w), flip);
      } else {
        kb[i] = _mm512_set1_epi32(key_word(k[i], c, D));
      }
    }
    for (int v = 0; v < HV; ++v) {
      const __m512i qv = _mm512_loadu_si512(packed + c * Gp + h0 + 16 * v);
      for (int i = 0; i < NK; ++i) acc[i][v] = _mm512_dpbusd_epi32(acc[i][v], kb[i], qv);
    }
  }
  for (int v = 0; v < HV; ++v) {
    const __m512i b = _mm512_loadu_si512(bias + h0 + 16 * v);
    const __m512 w = _mm512_loadu_ps(wq + h0 + 16 * v);
    for (int i = 0; i < NK; ++i) {
      const __m512i dot = _mm512_sub_epi32(acc[i][v], b);
      const __m512 f = _mm512_cvtepi32_ps(_mm512_max_epi32(dot, _mm512_setzero_si512()));
      part[i] = _mm512_add_ps(part[i], _mm512_mul_ps(f, w));
    }
  }
}

template <int NK>
__attribute__((target(AOP_LIQ_VNNI))) void vnni_keys(const int32_t* packed, const int32_t* bias, const float* wq,
                                                     int64_t Gp, int64_t D, const int8_t* const* k, __m512* part) {
  for (int i = 0; i < NK; ++i) part[i] = _mm512_setzero_ps();
  for (int64_t h0 = 0; h0 < Gp; h0 += 64) {
    switch (std::min<int64_t>(4, (Gp - h0) / 16)) {
      case 4: vnni_chunk<NK, 4>(packed, bias, wq, Gp, D, h0, k, part); break;
      case 3: vnni_chunk<NK, 3>(packed, bias, wq, Gp, D, h0, k, part); break;
      case 2: vnni_chunk<NK, 2>(packed, bias, wq, Gp, D, h0, k, part); break;
      default: vnni_chunk<NK, 1>(packed, bias, wq, Gp, D, h0, k, part); break;
    }
  }
}

// tree16 in registers (float addition commutes: lo + hi is part[l] + part[l + 8] exactly).
__attribute__((target(AOP_LIQ_VNNI))) inline float vnni_tree(__m512 part) {
  const __m256 t8 = _mm256_add_ps(_mm512_castps512_ps256(part),
                                  _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(part), 1)));
  const __m128 t4 = _mm_add_ps(_mm256_castps256_ps128(t8), _mm256_extractf128_ps(t8, 1));
  const __m128 t2 = _mm_add_ps(t4, _mm_movehl_ps(t4, t4));  // lanes 0, 1: t4[0] + t4[2], t4[1] + t4[3]
  return _mm_cvtss_f32(_mm_add_ss(t2, _mm_movehdup_ps(t2)));
}

__attribute__((target(AOP_LIQ_VNNI))) void score_vnni(const int32_t* packed, const int32_t* bias, const float* wq,
                                                      int64_t, int64_t Gp, int64_t D, const int8_t* const* keys,
                                                      const float* ks, int64_t n, float* scores) {
  constexpr int NK = 4;  // 4 keys x 4 head vectors: 16 accumulators, each query vector loaded once per 4 keys
  int64_t j = 0;
  for (; j + NK <= n; j += NK) {
    __m512 part[NK];
    vnni_keys<NK>(packed, bias, wq, Gp, D, keys + j, part);
    for (int i = 0; i < NK; ++i) scores[j + i] = vnni_tree(part[i]) * ks[j + i];
  }
  for (; j < n; ++j) {
    __m512 part[1];
    vnni_keys<1>(packed, bias, wq, Gp, D, keys + j, part);
    scores[j] = vnni_tree(part[0]) * ks[j];
  }
}
#endif

DotKernel choose() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  const int cap = cpu_isa_cap();
  if (cpu_avx512_core() && __builtin_cpu_supports("avx512vnni")) {
    return {pack_vnni, score_vnni, "avx512_vnni"};
  }
  if (cap >= kIsaAvx2 && __builtin_cpu_supports("avx2")) return {pack_avx2, score_avx2, "avx2"};
#endif
  return {pack_baseline, score_baseline, "baseline"};
}

}  // namespace

const DotKernel& dot_kernel() {
  static const DotKernel kernel = choose();
  return kernel;
}

}  // namespace aop::lightning_indexer_quant
