// The CPU kernel's two inner products over a tile of gathered key rows (float32 throughout),
// compiled for the widest x86-64 vectors this CPU has (host/tile_math.cpp).
#pragma once
#include <cstdint>

namespace aop::sparse_flash_attention {

constexpr int64_t kKeyVector = 16;  // keys per vector of tile_logits: a tile's key count is a multiple

// logits[h * T + j] = scale * dot(q[h, :W], kt[:W, j]) for h < H, j < T.
//   q [H][W], kt [W][T]: the tile's key rows transposed, T a multiple of kKeyVector (zero-padded).
void tile_logits(const float* q, int64_t H, const float* kt, int64_t T, int64_t W, float scale, float* logits);

// acc[h, :D] = acc[h, :D] * alpha[h] + sum_j p[h * T + j] * v[j * ldv + d] for h < H.
//   v rows of ldv floats (the first D columns are V).
void tile_accumulate(float* acc, int64_t H, int64_t D, const float* alpha, const float* p, int64_t T, const float* v,
                     int64_t ldv);

// dst[i] = src[i] widened to float32 for i < n (float16 through F16C where the CPU has it).
void widen_f16(const _Float16* src, int64_t n, float* dst);

}  // namespace aop::sparse_flash_attention
