// The plans of lightning_indexer, from common's tiling cache.
// CPU: key tiles of 64 keys (64 x D float32 stays in L1 for D = 128; 48 for the bf16
// key-major kernel), blocks of up to 16 query rows, and keys split into chunks only when there
// are too few (batch, head, row block) groups to keep every thread busy.
// AscendC kernel (MIX 1:2): the largest key tile (a multiple of 16 up to kMaxTileKeys, dividing
// block_size for PA_BSND) whose q.k operands fit L0B / L1 twice, then as many query rows per work
// item as L0A / L0C / L1 and one AIV's UB (each AIV keeps k_pad (score, index) pairs for half the
// rows) allow, then the largest key block per hand-off (up to kMaxBlockKeys) and head chunk the UB
// holds; work items (batch, row group) split evenly over the platform's cube cores (block_dim <=
// AIC count), the GM score workspace is two slots of m_pad x block_pad floats per AIC.
#include <algorithm>
#include <limits>
#include <string>

#include "ascend_ops/error.hpp"

#include "ascend_ops/cache.hpp"
#include "ascend_ops/hash.hpp"
#include "ascend_ops/kernel_launch.hpp"
#include "ascend_ops/parallel.h"
#include "ascend_ops/tensor.hpp"
#include "host/cpu_kernel.h"
#include "host/lightning_indexer.h"
#include "host/score_keys.h"

namespace aop::lightning_indexer {
namespace {

constexpr int64_t kKeyTile = 64;
constexpr int64_t kKeyMajorTile = 48;  // 8 blocks of 6 keys (host/score_keys.cpp)
constexpr int64_t kRowBlock = 16;
constexpr int64_t kItemsPerThread = 4;
constexpr int64_t kMinChunk = 1024;  // below this, merging chunks costs more than it spreads
// Keys per chunk at least, in units of sparse_count, unless a thread would otherwise get no
// item: a chunk's first 2K keys all enter its candidate buffer (selections, and a sort at the
// end, per chunk); only later keys are filtered by the K-th best score. Shorter chunks spend
// their time on selection, not scoring.
constexpr int64_t kMinChunkPerK = 8;

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

CpuPlan compute(const Dims& d, const Args& a, int32_t threads) {
  static_assert(kKeyTile % kKeyTileMultiple == 0 && kKeyMajorTile % kKeyTileMultiple == 0,
                "key tiles are whole micro-kernel tiles");
  CpuPlan p{};
  // The bf16 key-major kernel scores keys 6 at a time: a tile of whole 6-key blocks, which with
  // one query row (16 KiB for 64 heads, D = 128) stays in L1.
  const bool key_major = a.query.dtype == AOP_DTYPE_BFLOAT16 && d.head_dim % 2 == 0 && select_score_keys_bf16();
  const int64_t tile = key_major ? kKeyMajorTile : kKeyTile;
  p.key_tile = tile;
  p.threads = threads;
  // Rows per batch: S1 (BSND) or the average T1 / B (TND).
  const int64_t rows = a.layout_query == Layout::kTND ? (d.q_rows + std::max<int64_t>(d.batch, 1) - 1) /
                                                            std::max<int64_t>(d.batch, 1)
                                                      : d.q_rows;
  p.row_block = std::clamp<int64_t>(rows, 1, kRowBlock);
  const int64_t groups = std::max<int64_t>(1, d.batch * d.heads_k * ((rows + p.row_block - 1) / p.row_block));
  const int64_t keys = a.layout_key == Layout::kPA_BSND ? d.max_blocks * d.block_size
                       : a.layout_key == Layout::kTND   ? d.key_rows / std::max<int64_t>(d.batch, 1)
                                                        : d.key_rows;
  // Chunks per group: up to kItemsPerThread items per thread (balance) as long as chunks keep
  // min_chunk keys, at least one item per thread, never chunks under kMinChunk keys.
  const int64_t want_chunks = std::max<int64_t>(1, (kItemsPerThread * threads + groups - 1) / groups);
  const int64_t need_chunks = std::max<int64_t>(1, (threads + groups - 1) / groups);
  const int64_t min_chunk = std::max(kMinChunk, round_up(kMinChunkPerK * a.sparse_count, tile));
  const int64_t chunks = std::min(std::max(need_chunks, std::min(want_chunks, keys / min_chunk)),
                                  std::max<int64_t>(1, keys / kMinChunk));
  p.key_chunk = std::max(tile, round_up((std::max<int64_t>(keys, 1) + chunks - 1) / chunks, tile));
  return p;
}

constexpr int64_t kMaxTileKeys = 128;   // keys per Mmad at most (128 x D=128 fp16 = 32 KiB: two fit L0B)
constexpr int64_t kMaxHeadChunk = 32;  // heads per score copy on the AIV: fewer DMAs, each with its fixed latency
constexpr int64_t kMinSplitKeys = 512;  // keys per split at least (a full key block): its merge costs less than them
constexpr int64_t kFractal = 16;
constexpr int64_t kSortGroup = 32;
constexpr int64_t kUbAlign = 32;
constexpr int64_t kMaxMergeList = kLiMaxMergeList;

int64_t ub_buffer(int64_t bytes) { return round_up(bytes, kUbAlign); }

// Mirrors Vector::Init's InitBuffer calls (kernel/lightning_indexer_vector.h): one AIV's UB.
int64_t ub_bytes_of(int64_t heads, int64_t head_chunk, int64_t block_pad, int64_t k_pad, int64_t rows_per_aiv,
                    int64_t weight_bytes) {
  const int64_t take = std::min({block_pad, k_pad, kMaxMergeList});
  return 2 * ub_buffer(head_chunk * block_pad * 4)  // scores of head_chunk heads, double buffered
         + 3 * ub_buffer(block_pad * 4)             // acc, iota, idx
         + 2 * ub_buffer(block_pad * 8)             // sorted block, sort scratch
         + ub_buffer((k_pad + take) * 8)            // merge target / output staging
         + ub_buffer(rows_per_aiv * k_pad * 8)      // running top-k lists
         + ub_buffer(rows_per_aiv * heads * weight_bytes)  // weights as loaded
         + ub_buffer(rows_per_aiv * heads * 4)      // weights as float32
         + ub_buffer(rows_per_aiv * heads * 32);    // each weight as a 32-byte block (the Mul's src1)
}

// Key blocks of the busiest AIC and of the busiest AIV when `items` items of key_blocks blocks
// each are cut into `splits` splits of ceil(key_blocks / splits) blocks (Work::GetUnit; the last
// ones may be short or empty) and the shares (a unit, or with halves, step 2, a pair of units) are
// shared out as compute_kernel does (contiguous, the first shares % AICs AICs one more). Without
// halves one AIV does all of its group's blocks (the rows of a decode group are one row); with
// halves the two AIVs take one unit of each pair.
struct SplitLoad {
  int64_t aic = 0;
  int64_t aiv = 0;
};

SplitLoad busiest_blocks(int64_t items, int64_t splits, int64_t key_blocks, int64_t aics, int64_t step) {
  const int64_t shares = items * splits / step, groups = std::clamp<int64_t>(shares, 1, aics);
  const int64_t per_core = shares / groups, extra = shares % groups;
  const int64_t per_split = (key_blocks + splits - 1) / splits;
  SplitLoad busiest;
  for (int64_t g = 0, u = 0; g < groups; ++g) {
    int64_t aic = 0, aiv[2] = {0, 0};
    for (const int64_t end = u + (per_core + (g < extra ? 1 : 0)) * step; u < end; ++u) {
      const int64_t blocks = std::clamp<int64_t>(key_blocks - (u % splits) * per_split, 0, per_split);
      aic += blocks;
      aiv[step == 2 ? u % 2 : 0] += blocks;
    }
    busiest.aic = std::max(busiest.aic, aic);
    busiest.aiv = std::max({busiest.aiv, aiv[0], aiv[1]});
  }
  return busiest;
}

// The relative time of a split plan, in AIV blocks: the AIC and the busiest AIV work on their
// blocks at the same time (hand-offs overlap); an AIC block (q . k^T of block_keys keys, its keys
// at the HBM bandwidth shared by all AICs) took about 0.7 of an AIV block (head sum, sort, merge)
// in the emulator's timing model (decode, N1 = 64).
// Then the split merge: each AIV merges the lists of ceil(rows / AIVs) rows, a list about 0.07 of
// an AIV block (one row, K = 2048).
double split_cost(const SplitLoad& l, int64_t items, int64_t splits, int64_t key_blocks, int64_t aics) {
  const int64_t per_split = (key_blocks + splits - 1) / splits;
  const int64_t lists = splits > 1 ? (key_blocks + per_split - 1) / per_split : 0;
  const int64_t rows_per_aiv = (items + 2 * aics - 1) / (2 * aics);
  return std::max(0.7 * static_cast<double>(l.aic), static_cast<double>(l.aiv)) +
         0.07 * static_cast<double>(lists * rows_per_aiv);
}

// The split count (a multiple of step) of the lowest cost, preferring fewer splits unless more
// save 5%. Without halves, counts that leave a split empty are skipped (they would leave AICs
// idle); with halves an empty last split is the odd one out of a pair and costs nothing.
int64_t best_splits(int64_t items, int64_t key_blocks, int64_t aics, int64_t max_splits, int64_t step,
                    double* cost) {
  int64_t splits = step;
  double best = split_cost(busiest_blocks(items, splits, key_blocks, aics, step), items, splits, key_blocks, aics);
  for (int64_t s = splits + step; s <= max_splits && items > 0; s += step) {
    const int64_t per_split = (key_blocks + s - 1) / s;
    if (step == 1 && (key_blocks + per_split - 1) / per_split != s) continue;
    const double c = split_cost(busiest_blocks(items, s, key_blocks, aics, step), items, s, key_blocks, aics);
    if (c < 0.95 * best) {
      best = c;
      splits = s;
    }
  }
  *cost = best;
  return splits;
}

// Mirrors SplitMerge's InitBuffer calls (kernel/lightning_indexer_merge.h): the running list and
// the merge target, in turn (each the running list and one input buffer), and two input buffers of
// merge_pairs.
int64_t merge_ub_bytes(int64_t k_pad, int64_t merge_pairs) {
  return 2 * ub_buffer((k_pad + merge_pairs) * 8) + 2 * ub_buffer(merge_pairs * 8);
}

// The largest merge_pairs (a multiple of 32) whose buffers fit the UB, at most one MrgSort's worth
// of runs (the lists the running list leaves free, <= 4064 pairs each).
int64_t merge_pairs_for(int64_t k_pad, int64_t ub_bytes) {
  const int64_t running_lists = (k_pad + kMaxMergeList - 1) / kMaxMergeList;
  const int64_t most = (4 - running_lists) * kMaxMergeList / kSortGroup * kSortGroup;
  int64_t pairs = std::min(most, (ub_bytes - 16 * k_pad) / 32 / kSortGroup * kSortGroup);
  while (pairs > 0 && merge_ub_bytes(k_pad, pairs) > ub_bytes) pairs -= kSortGroup;
  return pairs;
}

// The AIC's L1 / L0 use (Cube::Init): q tile once, key tiles twice (double buffered), one L0C tile.
bool cube_fits(int64_t m_pad, int64_t tile, int64_t D, int64_t elem, const aop_platform& p) {
  return m_pad * D * elem <= p.l0a_bytes && 2 * tile * D * elem <= p.l0b_bytes && m_pad * tile * 4 <= p.l0c_bytes &&
         (m_pad + 2 * tile) * D * elem <= p.l1_bytes;
}

// The float op's kernel: Vector<HeadSum<W>> and Cube<T> (m_pad rows per slot).
int64_t float_ub_bytes(const LightningIndexerTiling& t, int64_t weight_bytes) {
  return ub_bytes_of(t.heads, t.head_chunk, t.block_pad, t.k_pad, t.rows_per_aiv, weight_bytes);
}
int64_t float_slot_rows(const LightningIndexerTiling& t) { return t.m_pad; }
constexpr KernelBudget kFloatBudget{"lightning_indexer", std::numeric_limits<int64_t>::max(), &float_ub_bytes,
                                    &cube_fits, &float_slot_rows};

}  // namespace

LightningIndexerTiling kernel_plan(const Args& a, const Dims& d, const aop_platform& p, const KernelBudget& budget) {
  // ub_bytes of a candidate: the fields it reads (heads, head_chunk, block_pad, k_pad, rows_per_aiv)
  const auto ub_bytes = [&](int64_t head_chunk, int64_t block_pad, int64_t k_pad, int64_t rows_per_aiv,
                            int64_t weight_bytes) {
    LightningIndexerTiling c{};
    c.heads = d.heads_q;
    c.head_chunk = static_cast<int32_t>(head_chunk);
    c.block_pad = static_cast<int32_t>(block_pad);
    c.k_pad = k_pad;
    c.rows_per_aiv = static_cast<int32_t>(rows_per_aiv);
    return budget.ub_bytes(c, weight_bytes);
  };
  LightningIndexerTiling t{};
  t.batch = d.batch;
  t.q_rows = d.q_rows;
  t.key_rows = d.key_rows;
  t.heads = d.heads_q;
  t.head_dim = d.head_dim;
  t.block_size = d.block_size;
  t.max_blocks = d.max_blocks;
  t.key_block_stride = d.key_block_stride;
  t.sparse_count = a.sparse_count;
  t.k_pad = round_up(a.sparse_count, kSortGroup);
  t.sparse_mode = static_cast<int32_t>(a.sparse_mode);
  t.layout_query = a.layout_query == Layout::kTND ? 1 : 0;
  t.layout_key = a.layout_key == Layout::kBSND ? 0 : a.layout_key == Layout::kTND ? 1 : 2;
  t.dtype = a.query.dtype == AOP_DTYPE_BFLOAT16 ? 1 : 0;
  t.weights_float = a.weights.dtype == AOP_DTYPE_FLOAT32 ? 1 : 0;
  const auto index_bytes = [](const std::optional<aop_tensor>& x) {
    return x ? static_cast<int32_t>(aop_dtype_size(x->dtype)) : 0;
  };
  t.lengths_q = index_bytes(a.actual_seq_lengths_query);
  t.lengths_k = index_bytes(a.actual_seq_lengths_key);
  t.table_bytes = index_bytes(a.block_table);
  t.has_values = a.sparse_values ? 1 : 0;
  t.cmp_ratio = static_cast<int32_t>(a.cmp_ratio);
  t.residual_bytes = index_bytes(a.cmp_residual_k);

  const int64_t elem = static_cast<int64_t>(aop_dtype_size(a.query.dtype));
  const int64_t weight_bytes = static_cast<int64_t>(aop_dtype_size(a.weights.dtype));
  const int64_t D = d.head_dim, N1 = d.heads_q;
  // TND decode (at most two query rows per batch on average: MTP) works on single rows: larger
  // groups would mostly hold one real row, leaving most of the q tile and AIV 1 idle.
  const bool tnd = a.layout_query == Layout::kTND;
  const int64_t rows_wanted =
      std::min(budget.max_rows, tnd && d.q_rows <= 2 * d.batch ? 1 : std::max<int64_t>(1, d.q_rows));
  // The largest key tile that fits; then as many rows per group as the cube memories and one
  // AIV's UB (with the smallest block and one head per copy) allow; then the largest block and
  // head chunk the UB still holds.
  for (int64_t tile = kMaxTileKeys; tile >= kFractal && t.rows_per_group == 0; tile -= kFractal) {
    if (a.layout_key == Layout::kPA_BSND && d.block_size % tile != 0) continue;
    const int64_t tile_pad = round_up(tile, kSortGroup);
    int64_t rows = 0;
    for (int64_t r = 1; r <= rows_wanted; ++r) {
      const int64_t m_pad = round_up(r * N1, kFractal);
      if (!budget.cube_fits(m_pad, tile, D, elem, p) || r * N1 > 4095 ||
          ub_bytes(1, tile_pad, t.k_pad, (r + 1) / 2, weight_bytes) > p.ub_bytes) {
        break;
      }
      rows = r;
    }
    if (rows == 0) continue;
    t.rows_per_group = static_cast<int32_t>(rows);
    t.rows_per_aiv = static_cast<int32_t>((rows + 1) / 2);
    t.tile_keys = static_cast<int32_t>(tile);
    t.m_pad = static_cast<int32_t>(round_up(rows * N1, kFractal));
    t.block_keys = t.tile_keys;
    t.block_pad = static_cast<int32_t>(tile_pad);
    t.head_chunk = 1;
    // Prefer the larger block (fewer sorts and merges), with at least min(N1, 4) heads per copy;
    // the smallest block takes any head chunk (one head always fits: rows were chosen so).
    bool found = false;
    for (int64_t block = kMaxBlockKeys / tile * tile; block >= tile && !found; block -= tile) {
      const int64_t block_pad = round_up(block, kSortGroup);
      for (int64_t hc = std::min(N1, kMaxHeadChunk); hc >= 1 && !found; hc /= 2) {
        if ((hc >= std::min<int64_t>(N1, 4) || block == tile) &&
            ub_bytes(hc, block_pad, t.k_pad, t.rows_per_aiv, weight_bytes) <= p.ub_bytes) {
          t.block_keys = static_cast<int32_t>(block);
          t.block_pad = static_cast<int32_t>(block_pad);
          t.head_chunk = static_cast<int32_t>(hc);
          found = true;
        }
      }
    }
  }
  // Keys per L0C tile (one Fixpipe): the most tiles of the block that L0C holds twice (so the
  // Mmads of the next chunk overlap this one's Fixpipe), dividing the block; one tile at a time,
  // single-buffered, when not even two tiles fit.
  t.fix_keys = t.tile_keys;
  t.c_buffers = 1;
  for (int64_t f = t.block_keys; f >= t.tile_keys && t.rows_per_group > 0; f -= t.tile_keys) {
    if (t.block_keys % f == 0 && 2 * static_cast<int64_t>(t.m_pad) * f * 4 <= p.l0c_bytes) {
      t.fix_keys = static_cast<int32_t>(f);
      t.c_buffers = 2;
      break;
    }
  }
  if (t.rows_per_group == 0) {
    throw aop::Error(AOP_VALUE_ERROR, std::string(budget.op) + ": no kernel tiling fits " + std::string(p.soc) +
                                          " (UB " + std::to_string(p.ub_bytes) + " bytes) for N1 = " +
                                          std::to_string(N1) + ", D = " + std::to_string(D) + ", sparse_count = " +
                                          std::to_string(a.sparse_count));
  }
  // Work items (kernel/lightning_indexer_work.h): BSND, each batch's row groups; TND, the row
  // groups of the flat rows in order (a batch's last group may be partial: + B items at most).
  const int64_t groups = (d.q_rows + t.rows_per_group - 1) / t.rows_per_group;
  t.groups_per_batch = tnd ? 0 : static_cast<int32_t>(groups);
  const int64_t items = !tnd ? d.batch * groups : t.rows_per_group == 1 ? d.q_rows : groups + d.batch;
  t.items = static_cast<int32_t>(items);
  // MIX 1:2: one group per AIC (block_dim may not exceed the AIC count), two AIVs each. Each
  // item's keys may be split so the AICs share the work evenly (decode: fewer items than AICs;
  // or items that do not divide evenly): the splits' partial top-k lists meet in GM and are
  // merged after a SyncAll of the AIVs. The split count minimises the key blocks of the busiest
  // AIC (a split holds whole blocks: split_blocks(), counts that leave a split empty are skipped),
  // preferring fewer splits unless more save 5%; every split keeps at least kMinSplitKeys of the
  // longest batch's keys.
  // Halves: a group of one query row leaves AIV 1 idle; instead the group can take two splits
  // of an item at once (an even split count), one per AIV, when the keys fill two blocks. Taken
  // when its cost is 5% lower.
  const int64_t aics = std::max<int64_t>(1, p.aic_cores);
  const int64_t max_keys = a.layout_key == Layout::kPA_BSND ? d.max_blocks * d.block_size : d.key_rows;
  const int64_t key_blocks = std::max<int64_t>(1, (max_keys + t.block_keys - 1) / t.block_keys);
  double cost = 0, halves_cost = 0;
  int64_t splits =
      best_splits(items, key_blocks, aics, std::clamp<int64_t>(max_keys / kMinSplitKeys, 1, aics), 1, &cost);
  bool halves = false;
  if (t.rows_per_group == 1 && key_blocks >= 2 && items > 0) {
    const int64_t s2 = best_splits(items, key_blocks, aics,
                                   std::clamp<int64_t>(max_keys / kMinSplitKeys, 2, 2 * aics), 2, &halves_cost);
    if (halves_cost < 0.95 * cost) {
      halves = true;
      splits = s2;
    }
  }
  const int64_t step = halves ? 2 : 1;
  t.halves = halves ? 1 : 0;
  t.slots = std::max(halves ? 4 : 2, budget.min_slots);
  t.split_align = budget.splits_in_tiles ? t.tile_keys : t.block_keys;
  t.splits = static_cast<int32_t>(splits);
  if (splits > 1) {
    const int64_t running_lists = (t.k_pad + kMaxMergeList - 1) / kMaxMergeList;
    t.merge_pairs = static_cast<int32_t>(merge_pairs_for(t.k_pad, p.ub_bytes));
    if (t.merge_pairs < (4 - running_lists) * kSortGroup) {
      throw aop::Error(AOP_VALUE_ERROR, std::string(budget.op) + ": the split merge's buffers do not fit " +
                                            std::string(p.soc) + " (UB " + std::to_string(p.ub_bytes) +
                                            " bytes) for sparse_count = " + std::to_string(a.sparse_count));
    }
  }
  const int64_t units = items * splits;
  t.units = static_cast<int32_t>(units);
  const int64_t shares = units / step;  // what a group takes at a time: a unit, or a pair (halves)
  t.block_dim = static_cast<int32_t>(std::clamp<int64_t>(shares, 1, aics));
  t.items_per_core = static_cast<int32_t>(shares / t.block_dim);
  t.cores_with_extra = static_cast<int32_t>(shares % t.block_dim);
  t.slot_floats = budget.slot_rows(t) * t.block_pad;
  t.workspace_per_aic = t.slots * t.slot_floats;
  t.partials_offset = t.block_dim * t.workspace_per_aic;
  t.workspace_floats =
      t.partials_offset + (splits > 1 ? units * t.rows_per_group * t.k_pad * 2 : 0);
  return t;
}

size_t kernel_check_bytes(const LightningIndexerTiling& t) {
  // MIX 1:2: a check slot per AIV (two per AIC), then a verdict line per AIC
  return launch::check_slots_bytes(3 * static_cast<int64_t>(t.block_dim), kLiCheckWords);
}

size_t kernel_workspace_bytes(const LightningIndexerTiling& t) {
  return kernel_check_bytes(t) + static_cast<size_t>(t.workspace_floats) * sizeof(float);
}

int64_t kernel_merge_ub_bytes(const LightningIndexerTiling& t) {
  return t.splits > 1 ? merge_ub_bytes(t.k_pad, t.merge_pairs) : 0;
}

int64_t kernel_ub_bytes(const LightningIndexerTiling& t) {
  const int64_t vector = ub_bytes_of(t.heads, t.head_chunk, t.block_pad, t.k_pad, t.rows_per_aiv, t.weights_float ? 4 : 2);
  return t.splits > 1 ? std::max(vector, merge_ub_bytes(t.k_pad, t.merge_pairs)) : vector;
}

LightningIndexerTiling kernel_tiling(const Args& a, const Dims& d, const aop_platform& platform) {
  KeyBuilder key("lightning_indexer.kernel");
  key.add_tensor(TensorView(a.query))
      .add_tensor(TensorView(a.key))
      .add_tensor(TensorView(a.weights))
      .add_int(static_cast<int64_t>(a.layout_query))
      .add_int(static_cast<int64_t>(a.layout_key))
      .add_int(d.batch)
      .add_int(d.max_blocks)
      .add_int(a.sparse_count)
      .add_int(a.sparse_mode)
      .add_int(a.actual_seq_lengths_query ? static_cast<int64_t>(a.actual_seq_lengths_query->dtype) : -1)
      .add_int(a.actual_seq_lengths_key ? static_cast<int64_t>(a.actual_seq_lengths_key->dtype) : -1)
      .add_int(a.block_table ? static_cast<int64_t>(a.block_table->dtype) : -1)
      .add_int(a.sparse_values ? 1 : 0)
      .add_int(a.cmp_ratio)
      .add_int(a.cmp_residual_k ? static_cast<int64_t>(a.cmp_residual_k->dtype) : -1)
      .add_platform(platform);
  return tiling_cache().get_or_compute_pod<LightningIndexerTiling>(
      key, [&] { return kernel_plan(a, d, platform, kFloatBudget); });
}

CpuPlan cpu_plan(const Args& a, const Dims& d) {
  const int32_t threads = aop_num_threads();
  KeyBuilder key("lightning_indexer.cpu");
  key.add_tensor(TensorView(a.query))
      .add_tensor(TensorView(a.key))
      .add_tensor(TensorView(a.weights))
      .add_int(static_cast<int64_t>(a.layout_query))
      .add_int(static_cast<int64_t>(a.layout_key))
      .add_int(d.batch)
      .add_int(d.max_blocks)
      .add_int(a.sparse_count)
      .add_int(threads);
  return tiling_cache().get_or_compute_pod<CpuPlan>(key, [&] { return compute(d, a, threads); });
}

}  // namespace aop::lightning_indexer
