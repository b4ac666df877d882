// The key-major bfloat16 micro-kernel: query heads across the vector lanes, keys broadcast.
//
// At decode one query row meets every key once, so a transposed float32 key tile (what
// score_row.cpp needs) would be built for a single use. Here the query row is packed once
// (score_keys.h) and stays in L1 (D = 128, 64 heads: 16 KiB), while each key is read from the
// cache as it lies: one 32-bit load per pair of its elements, broadcast to every lane, and
// VDPBF16PS multiplies it with the pair of 16 heads (bfloat16 products are exact in float32;
// the instruction accumulates in float32). 6 keys x 4 vectors of 16 heads are accumulated in
// registers over all of D, then ReLU, the weight and the head sum.
//
// Compiled for AVX512_BF16 through a target attribute and chosen at run time; never
// -march=native.
#include "host/score_keys.h"

#include <cstring>

#include "host/cpu_kernel.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 10
#define AOP_LI_HAVE_BF16_KERNEL 1
#include <immintrin.h>
#endif

namespace aop::lightning_indexer {
namespace {

#ifdef AOP_LI_HAVE_BF16_KERNEL
#define AOP_LI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))

constexpr int kKeys = 6;        // keys per register block
constexpr int kMaxVectors = 4;  // vectors of 16 heads per register block

AOP_LI_TARGET inline __m512bh broadcast_pair(const char* key, int64_t c) {
  uint32_t pair;
  std::memcpy(&pair, key + 4 * c, sizeof pair);
  return (__m512bh)_mm512_set1_epi32(static_cast<int>(pair));
}

// NK keys against V vectors of heads (the heads h0 .. h0 + 16 V - 1 of qp / w): adds
// w[h] * ReLU(q[h] . k) for those heads to part[j], lane by lane.
template <int NK, int V>
AOP_LI_TARGET inline void heads_block(const uint32_t* qp, const float* w, int64_t Gp, int64_t pairs,
                                      const char* const* keys, __m512* part) {
  __m512 acc[V][NK];
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v)
#pragma GCC unroll 8
    for (int j = 0; j < NK; ++j) acc[v][j] = _mm512_setzero_ps();
  for (int64_t c = 0; c < pairs; ++c) {
    __m512bh q[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) q[v] = (__m512bh)_mm512_loadu_si512(qp + c * Gp + v * kHeadLanes);
#pragma GCC unroll 8
    for (int j = 0; j < NK; ++j) {
      const __m512bh k = broadcast_pair(keys[j], c);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[v][j] = _mm512_dpbf16_ps(acc[v][j], q[v], k);
    }
  }
  const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    const __m512 wv = _mm512_loadu_ps(w + v * kHeadLanes);
    // max(x, 0) gives 0 for NaN, as the float32 path's ReLU does.
#pragma GCC unroll 8
    for (int j = 0; j < NK; ++j) part[j] = _mm512_fmadd_ps(wv, _mm512_max_ps(acc[v][j], zero), part[j]);
  }
}

// NK keys against every head, 64 at a time, then each key's 16 lanes summed.
template <int NK>
AOP_LI_TARGET inline void keys_block(const uint32_t* qp, const float* w, int64_t Gp, int64_t pairs,
                                     const char* const* keys, float* scores) {
  __m512 part[NK];
#pragma GCC unroll 8
  for (int j = 0; j < NK; ++j) part[j] = _mm512_setzero_ps();
  for (int64_t h0 = 0; h0 < Gp; h0 += kMaxVectors * kHeadLanes) {
    const int64_t vectors = (Gp - h0) / kHeadLanes;
    switch (vectors >= kMaxVectors ? kMaxVectors : vectors) {
      case 4: heads_block<NK, 4>(qp + h0, w + h0, Gp, pairs, keys, part); break;
      case 3: heads_block<NK, 3>(qp + h0, w + h0, Gp, pairs, keys, part); break;
      case 2: heads_block<NK, 2>(qp + h0, w + h0, Gp, pairs, keys, part); break;
      default: heads_block<NK, 1>(qp + h0, w + h0, Gp, pairs, keys, part); break;
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < NK; ++j) scores[j] = _mm512_reduce_add_ps(part[j]);
}

AOP_LI_TARGET inline void prefetch_rows(const char* const* rows, int64_t begin, int64_t end, int64_t bytes) {
  for (int64_t j = begin; j < end; ++j) {
    for (int64_t off = 0; off < bytes; off += 64) _mm_prefetch(rows[j] + off, _MM_HINT_T0);
  }
}

AOP_LI_TARGET void score_keys_avx512bf16(const uint32_t* qp, const float* w, int64_t Gp, int64_t D,
                                         const char* const* keys, int64_t n, float* scores,
                                         const char* const* next, int64_t next_n) {
  const int64_t pairs = D / 2;
  int64_t j = 0;
  for (; j + kKeys <= n; j += kKeys) {
    if (j < next_n) prefetch_rows(next, j, j + kKeys < next_n ? j + kKeys : next_n, 2 * D);
    keys_block<kKeys>(qp, w, Gp, pairs, keys + j, scores + j);
  }
  if (j < next_n) prefetch_rows(next, j, next_n, 2 * D);
  switch (n - j) {  // the last keys: fewer per block, the same operations per key
    case 5: keys_block<5>(qp, w, Gp, pairs, keys + j, scores + j); break;
    case 4: keys_block<4>(qp, w, Gp, pairs, keys + j, scores + j); break;
    case 3: keys_block<3>(qp, w, Gp, pairs, keys + j, scores + j); break;
    case 2: keys_block<2>(qp, w, Gp, pairs, keys + j, scores + j); break;
    case 1: keys_block<1>(qp, w, Gp, pairs, keys + j, scores + j); break;
    default: break;
  }
}
#endif

}  // namespace

ScoreKeysFn select_score_keys_bf16() {
#ifdef AOP_LI_HAVE_BF16_KERNEL
  static const ScoreKeysFn fn = [] {
    const bool ok = cpu_avx512_core() && __builtin_cpu_supports("avx512bf16");
    return ok ? score_keys_avx512bf16 : static_cast<ScoreKeysFn>(nullptr);
  }();
  return fn;
#else
  return nullptr;
#endif
}

}  // namespace aop::lightning_indexer
