// The launch tiling of lightning_indexer: a POD written by host/tiling.cpp (from the platform's
// core count and UB / L1 / L0 sizes) and read by the AscendC kernel (through GM on NPU, through
// the emulator here). A MIX 1:2 kernel: block_dim groups of 1 AIC + 2 AIVs.
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
  int64_t key_block_stride;  // PA_BSND: elements from one cache block to the next (key.stride(0)), else 0
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
  int32_t cmp_ratio;         // r: keys are compressed rows of r tokens (1: uncompressed)
  int32_t residual_bytes;    // bytes per cmp_residual_k entry: 0 (absent: residual 0), 4 or 8
  int32_t rows_per_group;    // query rows of one work item (one AIC's q tile)
  int32_t rows_per_aiv;      // ceil(rows_per_group / 2): AIV 0 of the group takes the first ones, AIV 1 the rest
  int32_t m_pad;             // rows_per_group * N1 rounded up to 16: rows of the q tile (L0A)
  int32_t tile_keys;         // keys per Mmad (multiple of 16; divides block_size for PA_BSND)
  int32_t block_keys;        // keys per hand-off (a multiple of tile_keys): one GM slot, one Sort + merge
  int32_t fix_keys;          // keys per L0C tile / Fixpipe (a multiple of tile_keys dividing block_keys)
  int32_t c_buffers;         // L0C tiles of fix_keys (2: double buffered, 1 when two do not fit)
  int32_t block_pad;         // block_keys rounded up to 32 (sort granularity): the slot's row stride
  int32_t head_chunk;        // heads of one workspace -> UB copy on the AIV
  int32_t groups_per_batch;  // BSND query: row groups per batch, ceil(S1 / rows); TND: 0
  int32_t items;             // work items: B * groups_per_batch (BSND); TND: the flat rows' groups,
                             // T1 for one row per group, else ceil(T1 / rows) + B (Work::FirstItem)
  int32_t splits;            // key splits per item (> 1 when there are fewer items than AICs: decode)
  int32_t units;             // items * splits: what the AICs share out
  int32_t block_dim;         // AIC count launched (MIX 1:2: 2 * block_dim AIVs); <= the platform's AICs
  int32_t items_per_core;    // every group gets this many units (pairs of units with halves) ...
  int32_t cores_with_extra;  // ... and the first cores_with_extra get one more
  int32_t merge_pairs;       // splits > 1: (score, index) pairs of one input buffer of the split merge (two,
                             // double buffered; kernel/lightning_indexer_merge.h), else 0
  int32_t halves;            // 1: rows_per_group = 1 (decode): the group takes its units in pairs of
                             // consecutive splits of one item (splits is even), the AIC alternates their
                             // blocks and AIV s works on split 2p + s alone (a row per AIV, not one AIV
                             // idle); items_per_core / cores_with_extra count pairs. 0: one unit at a time
  int32_t slots;             // GM score slots per AIC: 2 (ping-pong), 4 with halves (two per AIV)
  int32_t split_align;       // keys: every split of an item but the last covers a multiple of them
                             // (block_keys; lightning_indexer_quant: tile_keys, for a finer balance)
  int64_t slot_floats;       // float32 elements of one GM score slot: m_pad * block_pad
  int64_t workspace_per_aic;  // float32 elements of the GM workspace per AIC: `slots` slots
  int64_t partials_offset;   // splits > 1: float32 offset of the partial top-k lists in the workspace
                             // (after block_dim * workspace_per_aic), [units, rows_per_group, k_pad, 2]
  int64_t workspace_floats;  // float32 elements of the whole workspace
};

// The in-kernel data checks (all or nothing; shared by the kernel and host/validate.cpp). The
// batches are split evenly over the launch's AIVs; each checks, for its batches, the query
// lengths, then the key lengths, then the block ids the batch uses (the host's order), writes a
// 64-byte check slot (8 int64 words, the layout of the error record) in the workspace's first
// 2 * block_dim * 64 bytes, then SyncAll<true> (the AIVs); every AIV reads every verdict code and each
// AIC reads its group's verdict line (the next block_dim * 64 bytes, written by the group's AIVs):
// no core reads keys through a block id or writes an output if any slot holds an error. The first error is the one of the
// earliest phase (query lengths, key lengths, block ids), then the lowest core (= lowest batch);
// AIV 0 copies it into the error record if its word 0 is 0.
// The residuals (cmp_residual_k) are checked last, after the block ids: a phase of their own.
// Words: [0] code, [1] index (batch b), [2] value, [3] aux, [4..7] context for the message.
// MrgSort takes lists of at most 4095 pairs (A2 docs): the kernel's merges and the tiling's UB budget.
constexpr int32_t kLiMaxMergeList = 4064;
constexpr int32_t kLiCheckWords = 8;  // one slot / the record: 64 bytes, one data-cache line
enum LightningIndexerError : int64_t {
  kLiOk = 0,
  // actual_seq_lengths_query[b] = [2]: negative / below the previous end [3] (cumulative ends) /
  // beyond the limit [3]; [4] layout_query
  kLiLenQNegative = 0x301,
  kLiLenQBelowPrevious = 0x302,
  kLiLenQBeyond = 0x303,
  // actual_seq_lengths_key[b], the same; [4] layout_key
  kLiLenKNegative = 0x304,
  kLiLenKBelowPrevious = 0x305,
  kLiLenKBeyond = 0x306,
  // block_table[b][[3]] = [2] outside [0, num_blocks): [4] num_blocks, [5] the batch's key length,
  // [6] block_size
  kLiBlockIdOutOfRange = 0x307,
  // cmp_residual_k[b] = [2] outside [0, cmp_ratio): [3] cmp_ratio
  kLiResidualOutOfRange = 0x308,
  // lightning_indexer_quant's scales (kernel/liq_scale_check.h, after the residuals; [2] a value:
  // float32 bits, or float16 bits | kLiHalfTag):
  // query_dequant_scale not finite or < 0: [1] flat query row, [3] head, [4] layout_query, [5] S1
  kLiqQueryScaleInvalid = 0x309,
  // key_dequant_scale of a visible key not finite or < 0: [1] batch, [3] logical key j, [4] flat
  // element of the scale tensor, [5] layout_key, [6] block_size (PA_BSND) / S2 (BSND), [7] N2 |
  // (1 << 32 when the scale tensor has a trailing dim of 1)
  kLiqKeyScaleInvalid = 0x30A,
  // |weights * query_dequant_scale| >= 65520: [1] row, [2] weights, [3] head, [4] layout_query,
  // [5] S1, [6] the query_dequant_scale
  kLiqWeightScaleOverflow = 0x30B,
};
constexpr int64_t kLiHalfTag = int64_t{1} << 32;  // a record value holding float16 bits
