// The register-blocked q·k micro-kernel with ReLU and the weighted head sum fused.
//
// Written with GCC/Clang vector extensions (no intrinsics) and compiled three times on x86-64:
// AVX-512, AVX2+FMA and the SSE2 baseline every x86-64 wheel may assume; the choice is made
// at run time (__builtin_cpu_supports), never with -march=native. Elsewhere (aarch64) the
// baseline version uses the target's own vectors (NEON).
#include <cstdlib>
#include <cstring>

#include "host/cpu_kernel.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=fast")  // fuse a*b+c into FMA where the target has it
#endif

namespace aop::lightning_indexer {
namespace {

// Vectors of the target's native width: a wider generic vector is split by GCC into pieces that
// it keeps on the stack (AVX2 with 64-byte vectors ran about 10x below the FMA rate).
typedef float V4 __attribute__((vector_size(16)));
typedef int32_t I4 __attribute__((vector_size(16)));
typedef float V8 __attribute__((vector_size(32)));
typedef int32_t I8 __attribute__((vector_size(32)));
typedef float V16 __attribute__((vector_size(64)));
typedef int32_t I16 __attribute__((vector_size(64)));

template <class V>
__attribute__((always_inline)) inline V load(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class V>
__attribute__((always_inline)) inline void store(float* p, V v) {
  std::memcpy(p, &v, sizeof v);
}

// HB heads against one vector of keys (sizeof(V) / 4 of them, KT a multiple): HB accumulators
// held in registers over the whole of D.
template <class V, class I, int HB>
__attribute__((always_inline)) inline void heads_block(const float* q, const float* w, int64_t D, const float* kt,
                                                       int64_t KT, float* scores) {
  constexpr int64_t kLanes = sizeof(V) / sizeof(float);
  for (int64_t j0 = 0; j0 < KT; j0 += kLanes) {
    V acc[HB];
    for (int h = 0; h < HB; ++h) acc[h] = V{};
    const float* col = kt + j0;
    for (int64_t d = 0; d < D; ++d) {
      const V k = load<V>(col + d * KT);
      for (int h = 0; h < HB; ++h) acc[h] += q[h * D + d] * k;
    }
    V s = load<V>(scores + j0);
    const V zero{};
    for (int h = 0; h < HB; ++h) {
      const I positive = acc[h] > zero;
      V relu;
      const I bits = reinterpret_cast<const I&>(acc[h]) & positive;
      std::memcpy(&relu, &bits, sizeof relu);
      s += w[h] * relu;
    }
    store<V>(scores + j0, s);
  }
}

template <class V, class I, int HB>
__attribute__((always_inline)) inline void score_row_impl(const float* q, const float* w, int64_t G, int64_t D,
                                                          const float* kt, int64_t KT, float* scores) {
  for (int64_t j = 0; j < KT; ++j) scores[j] = 0.0f;
  int64_t h = 0;
  for (; h + HB <= G; h += HB) heads_block<V, I, HB>(q + h * D, w + h, D, kt, KT, scores);
  for (; h < G; ++h) heads_block<V, I, 1>(q + h * D, w + h, D, kt, KT, scores);
}

// 16-byte vectors: SSE2 (x86-64 baseline) or NEON; 8 heads = 8 of the 16 (SSE2) registers.
void score_row_baseline(const float* q, const float* w, int64_t G, int64_t D, const float* kt, int64_t KT,
                        float* scores) {
  score_row_impl<V4, I4, 8>(q, w, G, D, kt, KT, scores);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma"))) void score_row_avx2(const float* q, const float* w, int64_t G, int64_t D,
                                                        const float* kt, int64_t KT, float* scores) {
  score_row_impl<V8, I8, 8>(q, w, G, D, kt, KT, scores);
}

__attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma"))) void score_row_avx512(
    const float* q, const float* w, int64_t G, int64_t D, const float* kt, int64_t KT, float* scores) {
  score_row_impl<V16, I16, 8>(q, w, G, D, kt, KT, scores);
}
#endif

struct Choice {
  ScoreRowFn fn;
  const char* isa;
};

Choice choose() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  const int cap = cpu_isa_cap();
  if (cap >= 2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw")) {
    return {score_row_avx512, "avx512"};
  }
  if (cap >= 1 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {score_row_avx2, "avx2"};
#endif
  return {score_row_baseline, "baseline"};
}

const Choice& chosen() {
  static const Choice choice = choose();
  return choice;
}

}  // namespace

ScoreRowFn select_score_row() { return chosen().fn; }
const char* score_row_isa() { return chosen().isa; }

}  // namespace aop::lightning_indexer
