// The CPU kernel's inner loop, compiled once per instruction set (host/score_row.cpp).
#pragma once
#include <cstdint>
#include "ascend_ops/cpu_isa.hpp"  // cpu_isa_cap: the ASCEND_OPS_CPU_ISA cap the kernels read

namespace aop::lightning_indexer {

// scores[j] = sum_h w[h] * ReLU(sum_d q[h * D + d] * kt[d * KT + j]) for j < KT, float32
// accumulation in a fixed order (d, then h) for every key, so equal keys score equally.
//   q [G][D], w [G], kt [D][KT] (a transposed key tile, KT a multiple of 16), scores [KT]
using ScoreRowFn = void (*)(const float* q, const float* w, int64_t G, int64_t D, const float* kt, int64_t KT,
                            float* scores);

// The best version this CPU runs (AVX-512, AVX2+FMA or the baseline), chosen once.
ScoreRowFn select_score_row();

// "avx512", "avx2" or "baseline": which version select_score_row() picks here.
const char* score_row_isa();

constexpr int64_t kKeyTileMultiple = 16;

}  // namespace aop::lightning_indexer
