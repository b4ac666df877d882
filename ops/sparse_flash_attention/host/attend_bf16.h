// The CPU kernel's bfloat16 path on CPUs with AVX512_BF16 (host/attend_bf16.cpp): one query row,
// all its heads, over a run of selected positions whose rows are read where they lie in the
// cache. Chosen at run time; nullptr elsewhere (then the float32 tile path runs).
#pragma once
#include <cstdint>

namespace aop::sparse_flash_attention {

constexpr int64_t kBf16Tile = 96;  // keys per tile (a multiple of every key block of the logits: 6, 12, 24)

// Sizes of one row's work: heads padded to Hp (a multiple of 16), latent columns to Dp (16).
struct Bf16Shape {
  int64_t heads, D, Dr;  // N1, D and Dr, D and Dr even
  int64_t Hp() const { return (heads + 15) / 16 * 16; }
  int64_t Dp() const { return (D + 15) / 16 * 16; }
};

// Caller-owned buffers of one thread (sizes in elements).
struct Bf16Buffers {
  uint32_t* qp;      // [(D + Dr) / 2][Hp]: the query as bfloat16 pairs along the columns
  float* logits;     // [kBf16Tile][Hp]
  uint32_t* pp;      // [kBf16Tile / 2][Hp]: probabilities as bfloat16 pairs along the keys
  uint32_t* vp;      // [kBf16Tile / 2][Dp]: V as bfloat16 pairs along the keys
  float* alpha;      // [Hp]
  const uint16_t* zero;  // >= max(D, Dr) zeros: the padding key
  const char** lines;    // [bf16_lines_size()]: cache lines of the next tile to prefetch
  // Results: running max, sum of exp (unrounded) and the unnormalised P.V (float32).
  float* m;          // [Hp]
  float* l;          // [Hp]
  float* acc;        // [Hp][Dp]
};
int64_t bf16_qp_size(const Bf16Shape& s);
int64_t bf16_acc_size(const Bf16Shape& s);
int64_t bf16_lines_size(const Bf16Shape& s);

// Attends query row q [heads][D] (+ q_rope [heads][Dr]) over `count` positions: latent rows
// k[j] (D bfloat16), rope rows r[j] (Dr) and value rows v[j] (D; v == k when value is key).
// Logits s = scale * (q.k + q_rope.r) in float32, online softmax per tile in float32, the
// unnormalised probabilities rounded to bfloat16 and P.V accumulated in float32: on return
// m, l and acc hold the row's state (m = -inf, l = 0, acc = 0 for count = 0).
using AttendBf16Fn = void (*)(const Bf16Shape& s, const uint16_t* q, const uint16_t* q_rope, const uint16_t* const* k,
                              const uint16_t* const* r, const uint16_t* const* v, int64_t count, float scale,
                              const Bf16Buffers& b);

// The AVX512_BF16 build where the CPU has it (and ASCEND_OPS_CPU_ISA does not cap it), else nullptr.
AttendBf16Fn select_attend_bf16();

}  // namespace aop::sparse_flash_attention
