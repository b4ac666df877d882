// The launch tiling of lightning_indexer_quant's AscendC kernel: the float op's tiling (geometry,
// work split, hand-off slots, top-k and split merge: kernel/lightning_indexer_tiling.h, planned by
// the shared host planner with one query row per work item and one score row per slot) and what the
// int8 route adds. Written by host/liq_tiling.cpp, read by
// kernel/lightning_indexer_quant_kernel.cpp.
#pragma once
#include <stdint.h>

#include "kernel/lightning_indexer_tiling.h"

// The float op's fields (rows_per_group = 1, m_pad = n1_pad, slot_floats = block_pad), then:
struct LiqTiling : LightningIndexerTiling {
  int64_t wq_offset;          // bytes from the workspace start to wq [block_dim, wq_group_rows, N1] float16
                              // (64-byte aligned): each group's rows (kernel/liq_weights.h)
  int64_t wq_group_rows;      // rows of a group's wq region: the most query rows any group's units have
  int32_t n1_pad;             // N1 rounded up to 16: the q^T columns and the head reduction's K
  int32_t wq_chunk_rows;      // query rows per UB pass of the AIVs' weights x scales product
  int32_t ks_trailing_one;    // 1: key_dequant_scale is [.., N2, 1] (error messages index it so)
  int32_t reserved;
};
