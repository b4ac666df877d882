// The int8 score micro-kernel of the CPU backend (host/liq_dots.cpp), one build per ISA.
//
// For one query row of G heads (int8 q[h][d], float32 wq[h] = weights * query_dequant_scale)
// and n keys (int8 rows keys[j], float32 ks[j]):
//   dot[h, j]  = sum_d int32(q[h][d]) * int32(key_j[d])                         exact, int32
//   scores[j]  = ks[j] * tree16(part),  part[l] = sum_{h = l mod 16, ascending} float(max(dot, 0)) * wq[h]
// with tree16 the pairwise sum of the 16 lanes (l + 8, then + 4, + 2, + 1) and no fused
// multiply-add: every build (AVX512-VNNI, AVX2, baseline) gives the same float32 bits.
#pragma once
#include <cstdint>

namespace aop::lightning_indexer_quant {

constexpr int64_t kHeadLanes = 16;  // heads per lane group of the canonical sum; Gp = G rounded up

// Packs one query row q [G][D] for the chosen build: `packed` (packed_words(Gp, D) int32) and
// bias [Gp] (what the build subtracts from its accumulators; 0 where it needs none). Pad heads
// G..Gp-1 are zero.
using PackQueryFn = void (*)(const int8_t* q, int64_t G, int64_t D, int64_t Gp, int32_t* packed, int32_t* bias);

// scores[j] for j < n as above, from a row packed by the same build's PackQueryFn.
using ScoreKeysFn = void (*)(const int32_t* packed, const int32_t* bias, const float* wq, int64_t G, int64_t Gp,
                             int64_t D, const int8_t* const* keys, const float* ks, int64_t n, float* scores);

struct DotKernel {
  PackQueryFn pack;
  ScoreKeysFn score;
  const char* isa;  // "avx512_vnni", "avx2" or "baseline"
};

// int32 words a packed query row takes (every build fits in it).
inline int64_t packed_words(int64_t Gp, int64_t D) { return (D + 3) / 4 * 2 * Gp; }

// The best build this CPU runs under the ASCEND_OPS_CPU_ISA cap, chosen once.
const DotKernel& dot_kernel();

}  // namespace aop::lightning_indexer_quant
