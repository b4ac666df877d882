// The bfloat16 path of the CPU kernel on AVX512_BF16 (VDPBF16PS: products of bfloat16 pairs,
// exact in float32, added to float32 lanes). Compiled through a target attribute and chosen at
// run time; never -march=native.
//
// Logits, key-major: the query row is packed once as bfloat16 pairs [W/2][Hp] (heads in the
// lanes); each key row is read where it lies in the cache, one 32-bit pair broadcast to all lanes
// per step, NK keys x NHV vectors of 16 heads of accumulators over the D + Dr columns. No
// conversion or transpose of the keys. Softmax per tile, vectorised over the heads (lanes):
// running max, rescale factor, exp, unrounded sum, probabilities rounded to bfloat16 and packed
// as pairs of consecutive keys [T/2][Hp]. P.V: the tile's value rows interleaved once as pairs
// of consecutive keys [T/2][Dp] (shared by every head), then NH heads x NC vectors of 16 columns
// of accumulators, each step a broadcast probability pair against a value pair vector. The next
// tile's rows are prefetched while the logits of this one are computed (random rows: out of the
// hardware prefetcher's reach).
#include "host/attend_bf16.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "ascend_ops/cpu_isa.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 10
#define AOP_SFA_HAVE_BF16_KERNEL 1
#include <immintrin.h>
#endif

namespace aop::sparse_flash_attention {

int64_t bf16_qp_size(const Bf16Shape& s) { return (s.D + s.Dr) / 2 * s.Hp(); }
int64_t bf16_acc_size(const Bf16Shape& s) { return s.Hp() * s.Dp(); }
int64_t bf16_lines_size(const Bf16Shape& s) { return kBf16Tile * (2 * (s.D * 2 / 64 + 2) + s.Dr * 2 / 64 + 2); }

namespace {

#ifdef AOP_SFA_HAVE_BF16_KERNEL
#define AOP_SFA_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))

constexpr int kLanes = 16;

AOP_SFA_BF16 inline __m512bh broadcast_pair(const uint16_t* row, int64_t pair) {
  uint32_t bits;
  std::memcpy(&bits, row + 2 * pair, sizeof bits);
  return (__m512bh)_mm512_set1_epi32(static_cast<int>(bits));
}

// exp(x) for x <= 0 (Cephes' expf: 2^n * p(r), |r| <= ln2 / 2), about 1 ulp; x <= -104
// (-inf included) gives 0 or the smallest denormal, weight 0 for every sum it enters.
AOP_SFA_BF16 inline __m512 exp_nonpositive(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-104.0f));  // exp(-104) is below float32's denormals
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(p, n);
}

// float32 -> bfloat16 bits (round to nearest even; finite non-negative inputs), in the low or
// high half of each 32-bit lane.
AOP_SFA_BF16 inline __m512i round_bf16_high(__m512 x) {
  const __m512i u = _mm512_castps_si512(x);
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  const __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff)));
  return _mm512_and_si512(r, _mm512_set1_epi32(static_cast<int>(0xffff0000u)));
}

// The cache lines of `elements` bfloat16 at row, appended to lines.
inline int64_t add_lines(const uint16_t* row, int64_t elements, const char** lines, int64_t n) {
  const char* p = reinterpret_cast<const char*>(row);
  const char* end = p + elements * 2;
  for (const char* a = reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(p) & ~uintptr_t{63}); a < end; a += 64)
    lines[n++] = a;
  return n;
}

// Logits of NK keys against NHV vectors of heads (qp already offset to the first head):
// logits[j * Hp + lane] = scale * (q . k_j + q_rope . r_j).
template <int NK, int NHV>
AOP_SFA_BF16 inline void logits_block(const uint32_t* qp, int64_t Hp, int64_t Dh, int64_t Drh,
                                      const uint16_t* const* k, const uint16_t* const* r, __m512 scale,
                                      float* logits, const char* const* prefetch, int64_t n_prefetch) {
  __m512 acc[NK][NHV];
#pragma GCC unroll 24
  for (int j = 0; j < NK; ++j)
#pragma GCC unroll 4
    for (int v = 0; v < NHV; ++v) acc[j][v] = _mm512_setzero_ps();
  for (int64_t c = 0; c < Dh; ++c) {
    if (c < n_prefetch) _mm_prefetch(prefetch[c], _MM_HINT_T0);  // the next tile's lines, spread out
    __m512bh q[NHV];
#pragma GCC unroll 4
    for (int v = 0; v < NHV; ++v) q[v] = (__m512bh)_mm512_loadu_si512(qp + c * Hp + v * kLanes);
#pragma GCC unroll 24
    for (int j = 0; j < NK; ++j) {
      const __m512bh kb = broadcast_pair(k[j], c);
#pragma GCC unroll 4
      for (int v = 0; v < NHV; ++v) acc[j][v] = _mm512_dpbf16_ps(acc[j][v], q[v], kb);
    }
  }
  const uint32_t* qr = qp + Dh * Hp;
  for (int64_t c = 0; c < Drh; ++c) {
    __m512bh q[NHV];
#pragma GCC unroll 4
    for (int v = 0; v < NHV; ++v) q[v] = (__m512bh)_mm512_loadu_si512(qr + c * Hp + v * kLanes);
#pragma GCC unroll 24
    for (int j = 0; j < NK; ++j) {
      const __m512bh kb = broadcast_pair(r[j], c);
#pragma GCC unroll 4
      for (int v = 0; v < NHV; ++v) acc[j][v] = _mm512_dpbf16_ps(acc[j][v], q[v], kb);
    }
  }
#pragma GCC unroll 24
  for (int j = 0; j < NK; ++j)
#pragma GCC unroll 4
    for (int v = 0; v < NHV; ++v) _mm512_storeu_ps(logits + j * Hp + v * kLanes, _mm512_mul_ps(scale, acc[j][v]));
}

// One tile's logits, every head: key blocks of NK over head blocks of NHV vectors. The cache
// lines of the next tile's rows are prefetched along the way, a slice per block (random rows: out
// of the hardware prefetcher's reach).
template <int NK, int NHV>
AOP_SFA_BF16 void tile_logits_bf16(const Bf16Shape& s, const uint32_t* qp, const uint16_t* const* k,
                                   const uint16_t* const* r, const char* const* lines, int64_t n_lines, float scale,
                                   float* logits) {
  const int64_t Hp = s.Hp(), Dh = s.D / 2, Drh = s.Dr / 2;
  const __m512 sc = _mm512_set1_ps(scale);
  const int64_t calls = Hp / (NHV * kLanes) * (kBf16Tile / NK);
  const int64_t slice = (n_lines + calls - 1) / calls;
  int64_t done = 0;
  for (int64_t h = 0; h < Hp; h += NHV * kLanes) {
    for (int64_t j = 0; j < kBf16Tile; j += NK) {
      int64_t n = n_lines - done < slice ? n_lines - done : slice;
      if (n > Dh) n = Dh;  // one line per step of the latent loop at most
      logits_block<NK, NHV>(qp + h, Hp, Dh, Drh, k + j, r + j, sc, logits + j * Hp + h, lines + done, n);
      done += n;
    }
  }
  for (; done < n_lines; ++done) _mm_prefetch(lines[done], _MM_HINT_T0);  // D smaller than a slice
}

// acc[h0 + a][c0 * 16 ..] = acc * alpha + sum over key pairs of P pair . V pair, NH heads x NC
// vectors of 16 columns.
template <int NH, int NC>
AOP_SFA_BF16 inline void pv_block(float* acc, int64_t Dp, const float* alpha, const uint32_t* pp, int64_t Hp,
                                  const uint32_t* vp, int64_t pairs) {
  __m512 a[NH][NC];
#pragma GCC unroll 8
  for (int h = 0; h < NH; ++h) {
    const __m512 al = _mm512_set1_ps(alpha[h]);
#pragma GCC unroll 4
    for (int c = 0; c < NC; ++c) a[h][c] = _mm512_mul_ps(_mm512_loadu_ps(acc + h * Dp + c * kLanes), al);
  }
  for (int64_t jp = 0; jp < pairs; ++jp) {
    __m512bh v[NC];
#pragma GCC unroll 4
    for (int c = 0; c < NC; ++c) v[c] = (__m512bh)_mm512_loadu_si512(vp + jp * Dp + c * kLanes);
#pragma GCC unroll 8
    for (int h = 0; h < NH; ++h) {
      const __m512bh p = (__m512bh)_mm512_set1_epi32(static_cast<int>(pp[jp * Hp + h]));
#pragma GCC unroll 4
      for (int c = 0; c < NC; ++c) a[h][c] = _mm512_dpbf16_ps(a[h][c], p, v[c]);
    }
  }
#pragma GCC unroll 8
  for (int h = 0; h < NH; ++h)
#pragma GCC unroll 4
    for (int c = 0; c < NC; ++c) _mm512_storeu_ps(acc + h * Dp + c * kLanes, a[h][c]);
}

AOP_SFA_BF16 void attend_avx512bf16(const Bf16Shape& s, const uint16_t* q, const uint16_t* q_rope,
                                    const uint16_t* const* k, const uint16_t* const* r, const uint16_t* const* v,
                                    int64_t count, float scale, const Bf16Buffers& b) {
  const int64_t Hp = s.Hp(), Dp = s.Dp(), D = s.D, Dr = s.Dr, N1 = s.heads, Dh = D / 2, Drh = Dr / 2;
  const int64_t HV = Hp / kLanes;
  for (int64_t h = 0; h < Hp; ++h) {
    b.m[h] = -std::numeric_limits<float>::infinity();
    b.l[h] = 0.0f;
  }
  std::memset(b.acc, 0, static_cast<size_t>(Hp * Dp) * sizeof(float));
  if (count == 0) return;
  // The query as pairs along the columns, heads in the lanes (padding heads zero).
  // (A pair of consecutive bfloat16 is one little-endian 32-bit word: a 32-bit transpose, 16
  // heads a gather.)
  for (int64_t h = 0; h < Hp; h += kLanes) {
    const __mmask16 live = h + kLanes <= N1 ? static_cast<__mmask16>(0xffff)
                                            : static_cast<__mmask16>((1u << (N1 > h ? N1 - h : 0)) - 1u);
    const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i one = _mm512_set1_epi32(1);
    __m512i at = _mm512_mullo_epi32(lane, _mm512_set1_epi32(static_cast<int>(Dh)));
    const void* rows = live ? static_cast<const void*>(q + h * D) : static_cast<const void*>(b.zero);
    for (int64_t c = 0; c < Dh; ++c, at = _mm512_add_epi32(at, one)) {
      _mm512_storeu_si512(b.qp + c * Hp + h, _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, at, rows, 4));
    }
    at = _mm512_mullo_epi32(lane, _mm512_set1_epi32(static_cast<int>(Drh)));
    const void* ropes = live ? static_cast<const void*>(q_rope + h * Dr) : static_cast<const void*>(b.zero);
    for (int64_t c = 0; c < Drh; ++c, at = _mm512_add_epi32(at, one)) {
      _mm512_storeu_si512(b.qp + (Dh + c) * Hp + h,
                          _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, at, ropes, 4));
    }
  }
  const uint16_t* kt[kBf16Tile];
  const uint16_t* rt[kBf16Tile];
  const uint16_t* vt[kBf16Tile];
  for (int64_t t0 = 0; t0 < count; t0 += kBf16Tile) {
    const int64_t T = count - t0 < kBf16Tile ? count - t0 : kBf16Tile;
    for (int64_t j = 0; j < kBf16Tile; ++j) {  // padding keys: zero rows (their logits are never used)
      kt[j] = j < T ? k[t0 + j] : b.zero;
      rt[j] = j < T ? r[t0 + j] : b.zero;
      vt[j] = j < T ? v[t0 + j] : b.zero;
    }
    int64_t n_lines = 0;  // the next tile's cache lines
    for (int64_t j = t0 + kBf16Tile; j < count && j < t0 + 2 * kBf16Tile; ++j) {
      n_lines = add_lines(k[j], D, b.lines, n_lines);
      if (Dr) n_lines = add_lines(r[j], Dr, b.lines, n_lines);
      if (v != k) n_lines = add_lines(v[j], D, b.lines, n_lines);
    }
    if (HV % 4 == 0) {
      tile_logits_bf16<6, 4>(s, b.qp, kt, rt, b.lines, n_lines, scale, b.logits);
    } else if (HV % 2 == 0) {
      tile_logits_bf16<12, 2>(s, b.qp, kt, rt, b.lines, n_lines, scale, b.logits);
    } else {
      tile_logits_bf16<24, 1>(s, b.qp, kt, rt, b.lines, n_lines, scale, b.logits);
    }
    // Online softmax, 16 heads a vector: new max, rescale, exp; the sum unrounded, the
    // probabilities rounded to bfloat16 in pairs of consecutive keys (a missing odd key: 0).
    const int64_t pairs = (T + 1) / 2;
    for (int64_t h = 0; h < Hp; h += kLanes) {
      const __m512 m_old = _mm512_loadu_ps(b.m + h);
      __m512 m = m_old;
      for (int64_t j = 0; j < T; ++j) m = _mm512_max_ps(m, _mm512_loadu_ps(b.logits + j * Hp + h));
      const __m512 alpha = exp_nonpositive(_mm512_sub_ps(m_old, m));
      __m512 sum = _mm512_setzero_ps();
      for (int64_t jp = 0; jp < pairs; ++jp) {
        const __m512 e0 = exp_nonpositive(_mm512_sub_ps(_mm512_loadu_ps(b.logits + 2 * jp * Hp + h), m));
        sum = _mm512_add_ps(sum, e0);
        __m512i pair = _mm512_srli_epi32(round_bf16_high(e0), 16);
        if (2 * jp + 1 < T) {
          const __m512 e1 = exp_nonpositive(_mm512_sub_ps(_mm512_loadu_ps(b.logits + (2 * jp + 1) * Hp + h), m));
          sum = _mm512_add_ps(sum, e1);
          pair = _mm512_or_si512(pair, round_bf16_high(e1));
        }
        _mm512_storeu_si512(b.pp + jp * Hp + h, pair);
      }
      const __m512 l = _mm512_fmadd_ps(_mm512_loadu_ps(b.l + h), alpha, sum);
      _mm512_storeu_ps(b.l + h, l);
      _mm512_storeu_ps(b.m + h, m);
      _mm512_storeu_ps(b.alpha + h, alpha);
    }
    // V as pairs of consecutive keys, 16 columns a vector (columns past D zero).
    const __mmask16 tail = static_cast<__mmask16>((1u << (D % kLanes)) - 1u);
    for (int64_t jp = 0; jp < pairs; ++jp) {
      const uint16_t* v0 = vt[2 * jp];
      const uint16_t* v1 = vt[2 * jp + 1];  // kBf16Tile is even: a padding row past T
      uint32_t* dst = b.vp + jp * Dp;
      int64_t c = 0;
      for (; c + kLanes <= D; c += kLanes) {
        const __m512i lo = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(v0 + c)));
        const __m512i hi = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(v1 + c)));
        _mm512_storeu_si512(dst + c, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
      }
      if (c < D) {
        const __m512i lo = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(tail, v0 + c));
        const __m512i hi = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(tail, v1 + c));
        _mm512_storeu_si512(dst + c, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
      }
    }
    // P.V: 8 heads x 3 vectors of columns, then the column remainder.
    const int64_t CV = Dp / kLanes;
    for (int64_t h = 0; h < Hp; h += 8) {
      float* acc = b.acc + h * Dp;
      int64_t c = 0;
      for (; c + 3 <= CV; c += 3) {
        pv_block<8, 3>(acc + c * kLanes, Dp, b.alpha + h, b.pp + h, Hp, b.vp + c * kLanes, pairs);
      }
      if (CV - c == 2) pv_block<8, 2>(acc + c * kLanes, Dp, b.alpha + h, b.pp + h, Hp, b.vp + c * kLanes, pairs);
      if (CV - c == 1) pv_block<8, 1>(acc + c * kLanes, Dp, b.alpha + h, b.pp + h, Hp, b.vp + c * kLanes, pairs);
    }
  }
}
#endif


}  // namespace

AttendBf16Fn select_attend_bf16() {
#ifdef AOP_SFA_HAVE_BF16_KERNEL
  static const AttendBf16Fn fn = [] {
    const bool ok = cpu_avx512_core() && __builtin_cpu_supports("avx512bf16");
    return ok ? attend_avx512bf16 : static_cast<AttendBf16Fn>(nullptr);
  }();
  return fn;
#else
  return nullptr;
#endif
}

}  // namespace aop::sparse_flash_attention
