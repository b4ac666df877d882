// The bfloat16 key-major micro-kernel (host/score_keys.cpp): scores keys straight from the
// key cache, with no conversion or transpose of the keys, where the CPU has AVX512_BF16.
#pragma once
#include <cstdint>

namespace aop::lightning_indexer {

constexpr int64_t kHeadLanes = 16;  // query heads per vector of the packed query

// One query row packed for score_keys: qp[c * Gp + h] holds the bfloat16 pair
// (q[h][2c] in the low half, q[h][2c + 1] in the high half) for c < D / 2; w[h] the weight.
// Gp is G rounded up to kHeadLanes; pad heads have q = 0 and w = 0.
//
// scores[j] = sum_h w[h] * ReLU(dot(q[h], key j)) for j < n, float32 accumulation; keys[j]
// points at key j's D bfloat16 values (D even). Every key goes through the same operations in
// the same order, so equal keys score equally.
// While it scores, the kernel prefetches the key rows next[j], j < next_n (the next tile's),
// one for each key it scores: spread over the work rather than in a burst that stalls.
using ScoreKeysFn = void (*)(const uint32_t* qp, const float* w, int64_t Gp, int64_t D, const char* const* keys,
                             int64_t n, float* scores, const char* const* next, int64_t next_n);

// The AVX512_BF16 version, or nullptr where the CPU lacks it (then the transposing float32
// path of score_row.cpp runs). Chosen once.
ScoreKeysFn select_score_keys_bf16();

}  // namespace aop::lightning_indexer
