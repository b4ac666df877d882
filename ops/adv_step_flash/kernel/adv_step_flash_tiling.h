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
