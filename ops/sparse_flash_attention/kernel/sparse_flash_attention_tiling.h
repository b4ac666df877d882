// The launch tiling of sparse_flash_attention: a POD written by host/tiling.cpp and read by the
// AscendC kernel (through GM on NPU, through the emulator here). A MIX 1:2 kernel: block_dim
// groups of 1 AIC (Q.K^T and P.V on the cube) + 2 AIVs (gather checks, online softmax).
#pragma once
#include <stdint.h>

struct SparseFlashAttentionTiling {
  // The problem (host/validate.cpp's Dims)
  int64_t batch;              // B
  int64_t q_rows;             // S1 (BSND query) or T1 (TND query)
  int64_t key_rows;           // S2 (BSND), T2 (TND), num_blocks * block_size (PA_BSND)
  int64_t heads;              // N1 (= G: N2 = 1)
  int64_t head_dim;           // D (512)
  int64_t rope_dim;           // Dr (64)
  int64_t topk;               // K: entries per row of sparse_indices
  int64_t block_size;         // PA_BSND only, else 0
  int64_t num_blocks;         // PA_BSND only, else 0
  int64_t max_blocks;         // block_table.shape[1], PA_BSND only, else 0
  int64_t kv_block_stride;    // elements between consecutive blocks (rows) of key / value
  int64_t rope_block_stride;  // the same for key_rope
  int64_t sparse_block_size;  // sbs
  float scale_value;
  int32_t sparse_mode;        // 0 or 3
  int32_t layout_query;       // 0 BSND, 1 TND
  int32_t layout_kv;          // 0 BSND, 1 TND, 2 PA_BSND
  int32_t dtype;              // 0 float16, 1 bfloat16
  int32_t has_lengths_q;      // actual_seq_lengths_query given (int32)
  int32_t has_lengths_kv;     // actual_seq_lengths_kv given (int32)
  int32_t value_is_key;       // 1: value aliases key, read each latent row once
  int32_t has_lse;            // 1: write softmax_max and softmax_sum
  // The work split and tiles (host/tiling.cpp)
  int32_t block_dim;          // AICs launched (2 * block_dim AIVs)
  // Work units: split s of flat query row q is unit q * splits + s (B * S1 or T1 rows, rows
  // outside every batch included: they are zero-filled), shared out contiguously: every group
  // takes units_per_core, the first cores_with_extra one more (aop_kernel/core_share.h).
  // splits > 1 (fewer rows than AICs: decode): split s of a row takes entries
  // [s * E / splits, (s + 1) * E / splits) of the row's E entries before its first -1 (among the
  // n read; found by the check phase); its AIVs leave an unnormalised partial (acc, m, l) in GM,
  // and after a SyncAll of the AIVs the partials of each row are combined (flash-decoding).
  int32_t splits;
  int32_t units_per_core;
  int32_t cores_with_extra;
  // row_tiles > 0 (balanced split, instead of the equal one above): t = row_tiles tiles of a full
  // row, the R rows laid end to end (R * t tiles); group g takes the flat tiles
  // [g * R * t / block_dim, (g + 1) * R * t / block_dim) (floors), one unit per row it meets: the
  // row's tiles [a, b) of it -> entries [a * E / t, b * E / t). A row's piece s (its partial
  // q * splits + s) is the s-th group range it meets; splits >= the pieces of any row (the
  // combine takes each row's own piece count: kernel/sparse_flash_attention_rows.h, PiecesOf).
  int32_t row_tiles;
  int32_t combine_heads;      // splits > 1: heads of one combine item (a row's heads in groups of it)
  int32_t combine_buffers;    // splits > 1: items whose accs the combine's UB holds (2: the next one's
                              // copy overlaps this one's work; 1 when no AIV has two items)
  int32_t m_pad;              // N1 rounded up to 16: rows of the q / P tiles in L1 / L0A
  int32_t heads_per_aiv;      // ceil(N1 / 2): AIV 0 takes heads [0, heads_per_aiv), AIV 1 the rest
  int32_t tile_keys;          // selected positions per hand-off (multiple of 16): one S / P / O tile
  int32_t kv_width;           // columns of a gathered row in L1: D + Dr (+ D when value is separate)
  int32_t value_col;          // first column of V in the gathered row: 0 (value is key) or D + Dr
  int32_t k_chunk;            // columns of one Q.K^T Mmad (multiple of 16): L0A / L0B hold two
  int32_t n_chunk;            // output columns of one P.V Mmad + Fixpipe (multiple of 16, divides D)
  int32_t softmax_heads;      // heads of one S tile copy on the AIV (multiple of 8 or all its heads)
  int32_t out_heads;          // heads of one O tile copy / output write on the AIV
  int32_t in_buffers;         // UB buffers of S or O chunks (2..6): in_buffers - 1 O copies in flight
                              // (the softmax works on two S chunks at once: in_buffers - 2)
  int32_t index_chunk;        // sparse_indices entries per UB load on the AIV (multiple of 8)
  int64_t s_slot_floats;      // N1 * tile_keys float32: one S tile in GM (2 per AIC)
  int64_t p_slot_elems;       // N1 * tile_keys input-dtype elements: one P tile (2 per AIC)
  int64_t o_slot_floats;      // N1 * D float32: one P.V tile (2 per AIC)
  int64_t workspace_per_aic;  // bytes of one AIC's slots (a multiple of 64)
  int64_t slots_offset;       // bytes of the check slots and verdict lines before the AICs' slots
  int64_t partial_floats;     // splits > 1: float32 of one unit's partial: acc [N1, D], m [N1 -> 8k], l [N1 -> 8k]
  int64_t partials_offset;    // bytes before the partials ([units, partial_floats] float32)
  int64_t entries_offset;     // bytes before the rows' E ([rows] int32), written by the check phase
  int64_t workspace_bytes;    // the whole GM workspace
};

// The in-kernel data checks (all or nothing; the host's check_data, in its order): the batches
// are split over the AIVs; each checks the query lengths, the kv lengths, the block ids its
// batches read, then the first n entries of its rows' indices; check slots, SyncAll, verdict
// (common's aop_kernel/check_slots.h). On an error no output is written and the first error (by
// phase, then core) is copied into the error record.
// Words: [0] code, [1] index (batch b or row), [2] value, [3] aux, [4..7] context for the message.
constexpr int32_t kSfaCheckWords = 8;
enum SparseFlashAttentionError : int64_t {
  kSfaOk = 0,
  // actual_seq_lengths_query[b] = [2]: negative / below the previous end [3] / beyond [3]; [4] layout
  kSfaLenQNegative = 0x401,
  kSfaLenQBelowPrevious = 0x402,
  kSfaLenQBeyond = 0x403,
  // actual_seq_lengths_kv[b], the same
  kSfaLenKvNegative = 0x404,
  kSfaLenKvBelowPrevious = 0x405,
  kSfaLenKvBeyond = 0x406,
  // block_table[b][[3]] = [2] outside [0, num_blocks): [4] num_blocks, [5] act_kv, [6] block_size
  kSfaBlockIdOutOfRange = 0x407,
  // sparse_indices[row [1]][entry [3]] = [2] < -1: [4] batch, [5] n (entries read)
  kSfaIndexBelowMinusOne = 0x408,
};
