// The launch tiling of lightning_indexer_quant's AscendC kernel
// (ops/lightning_indexer/kernel/lightning_indexer_quant_kernel.cpp): lightning_indexer's planner
// (host/tiling.cpp: key tile, block, key splits, halves, slots, split merge) with this kernel's
// budget: one query row per work item (the head reduction's A is that row's weights), the AIC
// buffers of kernel/liq_cube.h, the AIV buffers of kernel/lightning_indexer_vector.h with
// kernel/liq_key_scale.h, one score row per slot; then wq's place in the workspace.
#include <algorithm>

#include "ascend_ops/cache.hpp"
#include "ascend_ops/hash.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/liq.h"

namespace aop::lightning_indexer_quant {
namespace {

constexpr int64_t kFractal = 16;
constexpr int64_t kUbAlign = 32;
constexpr int64_t kMaxMergeList = kLiMaxMergeList;
using lightning_indexer::kMaxBlockKeys;  // the largest key block kernel_plan takes
constexpr int64_t kWqChunkBytes = 16384;  // one of the two UB buffers of the weights x scales pass

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
int64_t ub_buffer(int64_t bytes) { return round_up(bytes, kUbAlign); }

// Mirrors Vector::Init and KeyScale::Init's InitBuffer calls: one AIV's UB.
int64_t ub_bytes(const LightningIndexerTiling& t, int64_t /*weight_bytes*/) {
  const int64_t bp = t.block_pad, kp = t.k_pad;
  const int64_t take = std::min({bp, kp, kMaxMergeList});
  return 2 * ub_buffer(bp * 4)          // the slot row, double buffered
         + 2 * ub_buffer(bp * 2)        // the key scales as loaded, double buffered
         + ub_buffer(bp * 4)            // the key scales as float32
         + 2 * ub_buffer(bp * 4) + ub_buffer(bp * 8)  // RestoreOrder: sort keys, scratch, sorted pairs
         + 3 * ub_buffer(bp * 4)        // acc, iota, idx
         + 2 * ub_buffer(bp * 8)        // sorted block, sort scratch
         + ub_buffer((kp + take) * 8)   // merge target / output staging
         + ub_buffer(t.rows_per_aiv * kp * 8);  // running top-k lists
}

// Mirrors LiqCube::Init (m_pad = n1_pad: q^T's columns): L1 q, wq, kKeysAhead + 1 = 4 key tiles,
// two stage-1 outputs; L0A two key tiles and wq; L0B q^T and two stage-1 outputs; L0C two int32
// [tile, n1_pad] and two float32 [16, block_keys] (a block's score row, one Fixpipe per block:
// block_keys is chosen later, so the largest block the planner takes).
bool cube_fits(int64_t n1_pad, int64_t tile, int64_t D, int64_t /*elem: int8*/, const aop_platform& p) {
  const int64_t q = n1_pad * D, w = kFractal * n1_pad * 2, keys = tile * D, a = 2 * tile * n1_pad * 2;
  return 2 * keys + w <= p.l0a_bytes && q + a <= p.l0b_bytes &&
         2 * tile * n1_pad * 4 + 2 * kFractal * kMaxBlockKeys * 4 <= p.l0c_bytes &&
         q + w + 4 * keys + a <= p.l1_bytes;
}

int64_t slot_rows(const LightningIndexerTiling& t) { return t.rows_per_group; }

// Four score slots per AIC also without halves (GM workspace only): the AIC's check-free prefix
// is slots / 2 blocks (kernel/liq_cube.h), two where the float op's two slots would allow one.
// Splits in whole key tiles, not blocks: a split's last block may be shorter, and the AICs'
// shares of an item's keys differ by a tile at most, not a block (decode B = 8, S2 = 8k: the
// busiest AIC takes 22 tiles, not 24).
constexpr lightning_indexer::KernelBudget kBudget{kOp, 1, &ub_bytes, &cube_fits, &slot_rows,
                                                  /*min_slots=*/4, /*splits_in_tiles=*/true};

// The most query rows any group's units hold (RowsOfGroup in kernel/liq_weights.h: the group's
// share of units, as aop_kernel::ShareOf splits them, every unit of item i being row i).
int64_t most_group_rows(const LightningIndexerTiling& t) {
  const int64_t step = t.halves ? 2 : 1;
  int64_t most = 0;
  for (int64_t g = 0; g < t.block_dim; ++g) {
    const int64_t begin = (g * t.items_per_core + std::min<int64_t>(g, t.cores_with_extra)) * step;
    const int64_t end = begin + (t.items_per_core + (g < t.cores_with_extra ? 1 : 0)) * step;
    if (end > begin) most = std::max(most, (end - 1) / t.splits + 1 - begin / t.splits);
  }
  return most;
}

LiqTiling compute(const Args& a, const Dims& d, const aop_platform& p) {
  LiqTiling t{};
  static_cast<LightningIndexerTiling&>(t) = lightning_indexer::kernel_plan(geometry(a), d, p, kBudget);
  t.fix_keys = t.tile_keys;  // each tile's stage 1 has an L0C tile of its own, each block's stage 2 one
  t.c_buffers = 2;
  t.n1_pad = static_cast<int32_t>(round_up(d.heads_q, kFractal));
  t.wq_chunk_rows = static_cast<int32_t>(std::max<int64_t>(1, kWqChunkBytes / (t.n1_pad * 2)));
  const int64_t before = static_cast<int64_t>(lightning_indexer::kernel_workspace_bytes(t));
  t.wq_offset = round_up(before, 64);
  t.wq_group_rows = most_group_rows(t);
  t.ks_trailing_one = TensorView(a.key_dequant_scale).ndim() == TensorView(a.key).ndim() ? 1 : 0;
  return t;
}

}  // namespace

LiqTiling kernel_tiling(const Args& a, const Dims& d, const aop_platform& platform) {
  KeyBuilder key("lightning_indexer_quant.kernel");
  key.add_tensor(TensorView(a.query))
      .add_tensor(TensorView(a.key))
      .add_int(static_cast<int64_t>(a.layout_query))
      .add_int(static_cast<int64_t>(a.layout_key))
      .add_int(d.batch)
      .add_int(d.max_blocks)
      .add_int(d.key_block_stride)
      .add_int(a.sparse_count)
      .add_int(a.sparse_mode)
      .add_int(a.actual_seq_lengths_query ? static_cast<int64_t>(a.actual_seq_lengths_query->dtype) : -1)
      .add_int(a.actual_seq_lengths_key ? static_cast<int64_t>(a.actual_seq_lengths_key->dtype) : -1)
      .add_int(a.block_table ? static_cast<int64_t>(a.block_table->dtype) : -1)
      .add_int(a.sparse_values ? 1 : 0)
      .add_int(TensorView(a.key_dequant_scale).ndim())
      .add_platform(platform);
  return tiling_cache().get_or_compute_pod<LiqTiling>(key, [&] { return compute(a, d, platform); });
}

size_t kernel_workspace_bytes(const LiqTiling& t) {
  return static_cast<size_t>(t.wq_offset + t.block_dim * t.wq_group_rows * t.heads * 2);
}

int64_t kernel_ub_bytes(const LiqTiling& t) {
  return std::max(ub_bytes(t, 2), lightning_indexer::kernel_merge_ub_bytes(t));
}

}  // namespace aop::lightning_indexer_quant
