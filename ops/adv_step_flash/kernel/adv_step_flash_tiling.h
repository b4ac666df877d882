// The launch tiling of advance_step_flashattn: a POD written by host/tiling.cpp and read by the
// AscendC kernel (through GM on NPU, through the emulator here).
#pragma once
#include <stdint.h>

struct AdvStepFlashTiling {
  int64_t num_seqs;            // rows of every [num_seqs] output
  int64_t num_queries;         // rows < num_queries advance; the rest are padding rows
  int64_t block_size;          // > 0
  int64_t max_blocks;          // max_blocks_per_seq: the width of block_tables
  int64_t table_row_stride;    // elements between rows of block_tables (>= max_blocks)
  int32_t token_bytes;         // input_tokens: 4 (int32) or 8 (int64)
  int32_t sampled_bytes;       // sampled_token_ids
  int32_t position_bytes;      // input_positions
  int32_t seq_len_bytes;       // seq_lens
  int32_t slot_bytes;          // slot_mapping
  int32_t table_bytes;         // block_tables
  int32_t block_dim;           // vector cores used
  int32_t seqs_per_core;       // every core gets this many sequences ...
  int32_t cores_with_extra;    // ... and the first cores_with_extra get one more
  int32_t chunk_seqs;          // sequences staged through UB at a time (a multiple of 8)
};

// The in-kernel data checks (all or nothing; shared by the kernel and host/validate.cpp). Every
// core checks its advancing rows, writes a 64-byte check slot in the workspace (8 int64 words, the
// layout of the error record), SyncAll, and no core writes an output if any slot holds an error;
// AIV 0 copies the first one (lowest core = lowest row) into the error record if its word 0 is 0.
// Words: [0] code, [1] index (the sequence i), [2] value, [3] aux, [4..7] context for the message.
// Within a row the checks run in this order (the host's), so the codes are listed in it.
constexpr int32_t kAsfCheckWords = 8;  // one slot / the record: 64 bytes, one data-cache line
// The UB of one step (the kernel's InitBuffer calls, the tiling's chunk size): each queue has
// kAsfBufferNum buffers (double buffering) of sections of chunk_seqs int64 slots: kAsfInSections
// in (seq_lens, sampled_token_ids), kAsfOutSections out (input_tokens, input_positions, seq_lens,
// slot_mapping).
constexpr int32_t kAsfBufferNum = 2;
constexpr int32_t kAsfInSections = 2;
constexpr int32_t kAsfOutSections = 4;
constexpr int32_t kAsfSectionElemBytes = 8;
enum AdvStepFlashError : int64_t {
  kAsfOk = 0,
  kAsfSeqLenNegative = 0x201,    // [2] seq_lens[i]
  kAsfBlockIndexBeyond = 0x202,  // [2] seq_lens[i], [3] block index, [4] block_size, [5] max_blocks
  kAsfBlockIdNegative = 0x203,   // [2] block id, [3] block index
  kAsfSlotOverflow = 0x204,      // [2] block id, [3] block index, [4] block_size, [5] offset: int64 overflow
  kAsfSeqLenMax = 0x205,         // [2] seq_lens[i] = INT64_MAX: pos + 1 overflows
  kAsfTokenInt32 = 0x206,        // [2] sampled token: does not fit int32 input_tokens
  kAsfPositionInt32 = 0x207,     // [2] position: does not fit int32 input_positions
  kAsfSeqLenInt32 = 0x208,       // [2] new seq_len: does not fit int32 seq_lens
  kAsfSlotInt32 = 0x209,         // [2] slot: does not fit int32 slot_mapping
};
