// The launch tiling of reshape_and_cache: a POD written by host/tiling.cpp and read by the
// AscendC kernel (through GM on NPU, through the emulator here).
#pragma once
#include <stdint.h>

// Where a cache keeps one token's row (host/cache_layout.h): element j of the H*D row at slot s
// (b = s / block_size, o = s % block_size) is at b * block_stride + o * slot_stride +
// (j / group_elems) * group_stride + ((j % group_elems) / chunk_elems) * chunk_stride + j % chunk_elems.
// Every cache_mode and stride pattern maps to it (heads that are adjacent merge into one group).
struct RacCacheLayout {
  int64_t block_size;
  int64_t block_stride;   // elements, all of them
  int64_t slot_stride;
  int64_t group_elems;    // G: a row is H*D / G groups (a head, or the whole row)
  int64_t group_stride;
  int64_t chunk_elems;    // F: a group is G / F chunks of F contiguous elements (F = G: one chunk)
  int64_t chunk_stride;
  int64_t span_elems;     // the view's extent from its first element: one past the last element
};

struct ReshapeAndCacheTiling {
  int64_t num_tokens;        // T': tokens to write (slot_mapping length)
  int64_t key_row_elems;     // H * Dk: one token's key, contiguous
  int64_t value_row_elems;   // H * Dv
  int64_t key_token_stride;  // elements between consecutive tokens of key (>= H * Dk)
  int64_t value_token_stride;
  int64_t num_slots;         // num_blocks * block_size
  int32_t elem_bytes;        // 1, 2 or 4
  int32_t slot_bytes;        // 4 (int32) or 8 (int64)
  int32_t block_dim;         // vector cores used
  int32_t tokens_per_core;   // every core gets this many tokens ...
  int32_t cores_with_extra;  // ... and the first cores_with_extra get one more
  int32_t chunk_elems;       // elements staged through UB per burst (32-byte multiple)
  int64_t block_size;        // slots per cache block
  int32_t has_value;         // 0: key-only (value / value_cache absent, never touched)
  int32_t cache_mode;        // 0: ND [num_blocks, block_size, H, D]; 1: NZ [num_blocks, H*D/F, block_size, F]
  int64_t num_blocks;        // for the check's error record (num_slots / block_size, also when block_size is 0)
  // The int8 quantising write (kv_cache_dtype "int8"); elem_bytes is then the cache's (1).
  int32_t quant;             // 0: a bit copy; 1: int8 codes of key / value (float16, bfloat16, float32)
  int32_t in_dtype;          // aop_dtype of key / value when quant (0 float16, 1 bfloat16, 2 float32)
  // k_scale, v_scale, k_offset, v_offset: aop_dtype (-1: absent) and element count (1, H or H*D)
  int32_t scale_dtype[4];
  int64_t scale_numel[4];
  int64_t table_elems;       // UB floats of one per-channel table: max(H*Dk, H*Dv) rounded up to 8
  int64_t key_head_size;     // Dk, Dv: a per-head scale covers this many elements of the row
  int64_t value_head_size;
  RacCacheLayout key_layout;    // where key_cache / value_cache keep a row (any cache_mode, any strides)
  RacCacheLayout value_layout;
  // The int8 write with a per-channel table, split two ways so that a core loads only a share of
  // the tables: block_dim = token groups x chan_groups; core c writes the tokens of group
  // c / chan_groups (tokens_per_core / cores_with_extra split the tokens over the groups) and
  // only the row elements [s * slice, (s + 1) * slice) with s = c % chan_groups, batch_tokens
  // tokens at a time (one strided DMA in per batch). chan_groups 1 and sliced 0 everywhere else.
  int32_t chan_groups;
  int32_t sliced;            // 1: the batched, sliced int8 write (kernel/reshape_and_cache_quant.h)
  int64_t key_slice_elems;   // key_row_elems / chan_groups (a multiple of 32), when sliced
  int64_t value_slice_elems;
  int64_t batch_tokens;      // when sliced: tokens per batch; chunk_elems = batch_tokens * the larger slice
};
// in_dtype / scale_dtype values (aop_dtype's numbering, which the kernel does not include).
constexpr int32_t kRacFloat16 = 0, kRacBfloat16 = 1, kRacFloat32 = 2;
// The quantising kernel's limit: per-channel tables of H*D floats live in UB for the whole launch.
constexpr int64_t kRacQuantMaxRowElems = 4096;
// Per-head scales the kernel widens with one Duplicate per head: at most this many heads.
constexpr int64_t kRacMaxHeads = 256;
// A sliced launch's per-channel steps run one level-0 repeat per token (repeatTime <= 255) with
// the rows' repeat stride in 32-byte blocks (<= 255): batches of at most kRacMaxRepeat tokens,
// slices of at most kRacMaxRepeatRowFloats floats.
constexpr int64_t kRacMaxRepeat = 255;
constexpr int64_t kRacMaxRepeatRowFloats = 255 * 8;

// The in-kernel data checks (all or nothing; shared by the kernel and host/validate.cpp). Every
// core checks its tokens, writes a 64-byte check slot in the workspace (8 int64 words, the layout
// of the error record), SyncAll, and no core writes a cache if any slot holds an error; AIV 0
// copies the first one (lowest core = lowest token) into the error record if its word 0 is 0.
// Words: [0] code, [1] index, [2] value, [3] aux, [4..7] context for the message.
constexpr int32_t kRacCheckWords = 8;  // one slot / the record: 64 bytes, one data-cache line
// Slots of slot_mapping a core stages through UB at a time (the check reads them, the copy reuses
// them). UB the kernel takes besides its row buffers: this chunk (int64 at most) and the check
// slots of every core, block_dim * 64 bytes.
constexpr int64_t kRacSlotChunk = 2048;
// UB buffers of the row queue (double buffering): the kernel's InitBuffer and the tiling's burst size.
constexpr int32_t kRacBufferNum = 2;
inline int64_t rac_check_ub_bytes(int64_t block_dim) { return kRacSlotChunk * 8 + block_dim * kRacCheckWords * 8; }
enum ReshapeAndCacheError : int64_t {
  kRacOk = 0,
  // slot_mapping[t] >= num_slots: [1] t, [2] slot, [4] num_blocks, [5] block_size
  kRacSlotOutOfRange = 0x101,
  // a scale not finite and > 0, or an offset not finite: [1] flat index, [2] its bits (in its own
  // dtype), [3] which: 0 k_scale, 1 v_scale, 2 k_offset, 3 v_offset, [4] its aop_dtype
  kRacBadScale = 0x102,
};
