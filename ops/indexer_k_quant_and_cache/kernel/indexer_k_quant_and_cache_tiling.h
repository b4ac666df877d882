// The launch tiling of indexer_k_quant_and_cache: a POD written by host/tiling.cpp and read by
// the AscendC kernel (split int8 layout only: the fused fp8 layout has no A2/A3 kernel).
#pragma once
#include <stdint.h>

struct IndexerKQuantTiling {
  int64_t num_tokens;          // T': tokens to write (slot_mapping length)
  int64_t head_dim;            // D
  int64_t quant_block;         // qbs: elements per group
  int64_t groups;              // G = D / qbs
  int64_t k_token_stride;      // elements between consecutive tokens of k (>= D)
  int64_t num_blocks;
  int64_t block_size;
  int64_t num_slots;           // num_blocks * block_size
  int64_t cache_block_stride;  // int8 elements between blocks of k_cache (>= block_size * D)
  int64_t scale_block_stride;  // elements between blocks of k_scale_cache (>= block_size * G)
  int32_t k_dtype;             // aop_dtype of k: float16, bfloat16 or float32
  int32_t scale_bytes;         // 2 (float16 scale cache) or 4 (float32)
  int32_t slot_bytes;          // 4 (int32) or 8 (int64)
  int32_t block_dim;           // vector cores used
  int32_t tokens_per_core;     // every core gets this many tokens ...
  int32_t cores_with_extra;    // ... and the first cores_with_extra get one more
  int32_t check_scales;        // 1: the float16 scale overflow is possible (bfloat16 / float32 k, float16 scales)
  int32_t resident_tokens;     // a core's first tokens whose codes and scales stay in UB from check to write
  int32_t scale_row_bytes;     // UB bytes of one token's scales (as float32), 32-byte aligned
  int32_t batch_tokens;        // tokens quantised together: one DMA for their rows, one vector op per step
};

// The in-kernel data checks, all or nothing (common's aop_kernel/check_slots.h): every core checks
// its tokens in order (slot first, then its scales), publishes its first error, SyncAll, and no
// core writes if any core found one. Words: [0] code, [1] token, [2] value, [3] aux, [4..7] context.
constexpr int32_t kIkqCheckWords = 8;
// Slots of slot_mapping a core stages through UB at a time (read by the check and by the write).
constexpr int64_t kIkqSlotChunk = 2048;
// The largest D the kernel takes (its float32 row buffers fit UB with room for resident tokens).
constexpr int64_t kIkqMaxHeadDim = 4096;
// UB the kernel takes besides the batch and the resident tokens: the slot chunk, the check slots.
inline int64_t ikq_fixed_ub_bytes(int64_t block_dim) { return kIkqSlotChunk * 8 + block_dim * kIkqCheckWords * 8; }
// UB of a batch of `batch` tokens: the input rows (float32 at most), three float32 rows, a half
// row and a code row per token, the group maxima (32 bytes each), two rows of scales per token,
// and the reduction's scratch (qbs float32).
inline int64_t ikq_batch_ub_bytes(int64_t batch, int64_t head_dim, int64_t quant_block, int64_t scale_row_bytes) {
  const int64_t row = (head_dim + 31) / 32 * 32;  // D bytes, 32-byte aligned
  const int64_t groups = head_dim / quant_block;
  return batch * (row * (4 + 3 * 4 + 2 + 1) + groups * 32 + 2 * scale_row_bytes) + (quant_block * 4 + 31) / 32 * 32;
}
// A batch takes at most this much UB (the rest holds resident tokens), and at most kIkqMaxBatch tokens.
constexpr int64_t kIkqBatchUbBytes = 96 * 1024;
constexpr int64_t kIkqMaxBatch = 64;

enum IndexerKQuantError : int64_t {
  kIkqOk = 0,
  // slot_mapping[t] >= num_slots: [1] t, [2] slot, [4] num_blocks, [5] block_size
  kIkqSlotOutOfRange = 0x101,
  // the float16 rounding of token t's group g scale is infinite: [1] t, [2] g, [3] amax (float32
  // bits), [4] the float32 scale (bits)
  kIkqScaleOverflow = 0x102,
};
