// The launch tiling of lightning_indexer: a POD written by host/tiling.cpp (from the platform's
// core count and UB / L1 / L0 sizes) and read by the AscendC kernel (through GM on NPU, through
// the emulator here).
#pragma once
#include <stdint.h>

struct LightningIndexerTiling {
  int64_t batch;             // B
  int64_t q_rows;            // S1 (BSND query) or T1 (TND query)
  int64_t key_rows;          // S2 (BSND key), T2 (TND key), num_blocks * block_size (PA_BSND)
  int64_t heads;             // N1 (N2 = 1)
  int64_t head_dim;          // D
  int64_t block_size;        // PA_BSND only, else 0
  int64_t max_blocks;        // block_table.shape[1], PA_BSND only, else 0
  int64_t sparse_count;      // K
  int64_t k_pad;             // K rounded up to 32 (sort granularity): the running top-k length
  int32_t sparse_mode;       // 0 or 3
  int32_t layout_query;      // 0 BSND, 1 TND
  int32_t layout_key;        // 0 BSND, 1 TND, 2 PA_BSND
  int32_t dtype;             // 0 float16, 1 bfloat16 (query and key)
  int32_t weights_float;     // 1: weights are float32, 0: the query dtype
  int32_t lengths_q;         // bytes per actual_seq_lengths_query entry: 0 (absent), 4 or 8
  int32_t lengths_k;         // bytes per actual_seq_lengths_key entry: 0 (absent), 4 or 8
  int32_t table_bytes;       // bytes per block_table entry: 0 (no table), 4 or 8
  int32_t has_values;        // 1: write sparse_values too
  int32_t rows_per_group;    // query rows of one work item (their running top-k lists fit in UB)
  int32_t m_pad;             // rows_per_group * N1 rounded up to 16: rows of the q tile (L0A)
  int32_t tile_keys;         // keys per q.k tile (multiple of 16; divides block_size for PA_BSND)
  int32_t tile_pad;          // tile_keys rounded up to 32 (sort granularity)
  int32_t groups_per_batch;  // row groups per batch slab: ceil(S1 / rows) or ceil(T1 / rows) (TND)
  int32_t items;             // work items: (batches [+1 for TND padding rows]) * groups_per_batch
  int32_t block_dim;         // cores launched
  int32_t items_per_core;    // every core gets this many items ...
  int32_t cores_with_extra;  // ... and the first cores_with_extra get one more
  int64_t workspace_per_core;  // float32 elements of the GM score workspace per core: m_pad * tile_pad
};
