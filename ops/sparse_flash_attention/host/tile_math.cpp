// Register-blocked tile products of the CPU kernel. Plain loops the compiler vectorises, built
// once per x86-64 level (AVX-512, AVX2+FMA, the SSE2 baseline) with the choice made at load time
// (target_clones); elsewhere the target's own vectors.
#include "host/tile_math.h"

#include <cstring>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=fast")
#endif

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define AOP_SFA_CLONES __attribute__((target_clones("avx512f", "arch=haswell", "default")))
#else
#define AOP_SFA_CLONES
#endif

namespace aop::sparse_flash_attention {
namespace {

constexpr int64_t kHeads = 4;  // query heads per register block
constexpr int64_t kKeys = 4;   // rows of V per pass of tile_accumulate

}  // namespace

// kHeads heads x 2 * kKeyVector keys of accumulators stay in registers over all of W: each
// loaded key vector feeds kHeads products, each broadcast query element two.
AOP_SFA_CLONES
void tile_logits(const float* q, int64_t H, const float* kt, int64_t T, int64_t W, float scale, float* logits) {
  constexpr int64_t kCols = 2 * kKeyVector;
  for (int64_t h = 0; h < H; h += kHeads) {
    const int64_t heads = H - h < kHeads ? H - h : kHeads;
    const float* qh = q + h * W;
    for (int64_t j = 0; j < T; j += kCols) {
      if (heads == kHeads && j + kCols <= T) {
        float acc[kHeads][kCols] = {};
        for (int64_t w = 0; w < W; ++w) {
          const float* row = kt + w * T + j;
          for (int64_t a = 0; a < kHeads; ++a) {
            const float x = qh[a * W + w];
            for (int64_t c = 0; c < kCols; ++c) acc[a][c] += x * row[c];
          }
        }
        for (int64_t a = 0; a < kHeads; ++a) {
          for (int64_t c = 0; c < kCols; ++c) logits[(h + a) * T + j + c] = scale * acc[a][c];
        }
        continue;
      }
      const int64_t cols = T - j < kCols ? T - j : kCols;  // a multiple of kKeyVector
      for (int64_t a = 0; a < heads; ++a) {
        float acc[kCols] = {};
        for (int64_t w = 0; w < W; ++w) {
          const float x = qh[a * W + w];
          const float* row = kt + w * T + j;
          for (int64_t c = 0; c < kKeyVector; ++c) acc[c] += x * row[c];
          if (cols == kCols) {
            for (int64_t c = kKeyVector; c < kCols; ++c) acc[c] += x * row[c];
          }
        }
        for (int64_t c = 0; c < cols; ++c) logits[(h + a) * T + j + c] = scale * acc[c];
      }
    }
  }
}

// Per head: rescale once, then rank-T update of its D accumulators, kKeys rows of V at a time.
AOP_SFA_CLONES
void tile_accumulate(float* acc, int64_t H, int64_t D, const float* alpha, const float* p, int64_t T, const float* v,
                     int64_t ldv) {
  for (int64_t h = 0; h < H; ++h) {
    float* out = acc + h * D;
    const float a = alpha[h];
    if (a != 1.0f) {
      for (int64_t d = 0; d < D; ++d) out[d] *= a;
    }
    const float* ph = p + h * T;
    int64_t j = 0;
    for (; j + kKeys <= T; j += kKeys) {
      const float p0 = ph[j], p1 = ph[j + 1], p2 = ph[j + 2], p3 = ph[j + 3];
      const float* v0 = v + j * ldv;
      const float* v1 = v0 + ldv;
      const float* v2 = v1 + ldv;
      const float* v3 = v2 + ldv;
      for (int64_t d = 0; d < D; ++d) out[d] += p0 * v0[d] + p1 * v1[d] + p2 * v2[d] + p3 * v3[d];
    }
    for (; j < T; ++j) {
      const float pj = ph[j];
      const float* vj = v + j * ldv;
      for (int64_t d = 0; d < D; ++d) out[d] += pj * vj[d];
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=skylake-avx512", "arch=haswell", "default")))
#endif
void widen_f16(const _Float16* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
}

}  // namespace aop::sparse_flash_attention
