// What both core types of lightning_indexer agree on: the tiling (read from GM word by word), the
// work items of a group (AIC GetBlockIdx(), AIV GetBlockIdx() / 2), each item's batch geometry and
// its key blocks. The AIC and the two AIVs of a group walk the same items and blocks in the same
// order: that is what keeps their hand-offs paired.
#pragma once
#include "kernel_operator.h"
#include "aop_kernel/core_share.h"
#include "kernel/lightning_indexer_tiling.h"
#include "kernel/lightning_indexer_visibility.h"

namespace lightning_indexer {

using AscendC::GlobalTensor;
using AscendC::LocalTensor;

constexpr int32_t kFractalRows = 16;  // rows of one L1 / L0 fractal
constexpr int32_t kSortGroup = 32;    // Sort / Extract work on groups of 32 pairs

__aicore__ inline int64_t Min(int64_t a, int64_t b) { return a < b ? a : b; }
__aicore__ inline int64_t Max(int64_t a, int64_t b) { return a > b ? a : b; }
__aicore__ inline int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// Query rows and key rows of the whole launch (TND / PA_BSND: the flat row count; BSND: batch
// times the padded length), and the elements a key GlobalTensor spans: a PA_BSND key's blocks may
// lie key_block_stride apart (a view of a larger cache).
__aicore__ inline int64_t QueryRowsTotal(const LightningIndexerTiling& t) {
  return t.layout_query == 1 ? t.q_rows : t.batch * t.q_rows;
}
__aicore__ inline int64_t KeyRowsTotal(const LightningIndexerTiling& t) {
  return t.layout_key == 0 ? t.batch * t.key_rows : t.key_rows;
}
__aicore__ inline int64_t KeySpanElements(const LightningIndexerTiling& t, int64_t key_rows) {
  return t.layout_key == 2 && key_rows > 0 ? (key_rows / t.block_size - 1) * t.key_block_stride + t.block_size * t.head_dim
                                           : key_rows * t.head_dim;
}

// An int32 / int64 GM index tensor read one entry at a time by the scalar unit (lengths, block
// table: inputs, never written).
class IndexTensor {
 public:
  __aicore__ inline void Init(GM_ADDR data, int32_t bytes) {
    bytes_ = bytes;
    if (bytes == 8) i64_.SetGlobalBuffer((__gm__ int64_t*)data);
    if (bytes == 4) i32_.SetGlobalBuffer((__gm__ int32_t*)data);
  }
  __aicore__ inline bool Present() const { return bytes_ != 0; }
  __aicore__ inline int64_t Get(int64_t i) const {
    return bytes_ == 8 ? i64_.GetValue(i) : static_cast<int64_t>(i32_.GetValue(i));
  }

 private:
  GlobalTensor<int64_t> i64_;
  GlobalTensor<int32_t> i32_;
  int32_t bytes_ = 0;
};

// One work item: a group of query rows [r0, slab_end) of one batch slab. Rows [r0, real_end)
// are real; the keys it needs are [0, extent) (the causal limit of the last real row). A unit is
// one split of an item: its key blocks cover [k0, k1).
struct Item {
  int64_t batch;
  int64_t q_begin;   // first flat query row of the batch's slab
  int64_t act_s1;
  int64_t act_s2;    // compressed rows when cmp_ratio > 1
  int64_t residual;  // cmp_residual_k[b], 0 when absent
  int64_t k_begin;   // first key row (BSND / TND), 0 for PA_BSND
  int64_t r0;
  int64_t slab_end;
  int64_t real_end;  // <= r0: no real rows
  int64_t extent;    // keys the group needs (0: none)
  int64_t split;     // which split of the item this unit is
  int64_t k0, k1;    // the unit's keys (a multiple of block_keys from 0; empty when k0 >= k1)
};

class Work {
 public:
  __aicore__ inline void Init(const LightningIndexerTiling& t, GM_ADDR lengths_q, GM_ADDR lengths_k,
                              GM_ADDR residual, int64_t group) {
    t_ = &t;
    lengths_q_.Init(lengths_q, t.lengths_q);
    lengths_k_.Init(lengths_k, t.lengths_k);
    residual_.Init(residual, t.residual_bytes);
    const int64_t step = Step();  // units per share (halves: a pair of splits of one item)
    const aop_kernel::CoreShare share = aop_kernel::ShareOf(group, t.items_per_core, t.cores_with_extra, step);
    begin_ = share.begin;
    end_ = share.end;
  }
  // Units the group takes at a time: 2 with halves (units u, u + 1: AIV 0 and AIV 1), else 1.
  __aicore__ inline int64_t Step() const { return t_->halves ? 2 : 1; }
  __aicore__ inline int64_t Begin() const { return begin_; }
  __aicore__ inline int64_t End() const { return end_; }

  // Unit u: split u % splits of item u / splits. Split s covers keys [s * L, (s + 1) * L) of the
  // item's extent, L = ceil(extent / splits) rounded up to split_align keys (SplitKeys).
  __aicore__ inline Item GetUnit(int64_t u) const {
    Item x = Get(u / t_->splits);
    x.split = u % t_->splits;
    const int64_t len = SplitKeys(x);
    x.k0 = Min(x.split * len, x.extent);
    x.k1 = Min(x.k0 + len, x.extent);
    return x;
  }

  // Hand-offs of unit x: its key blocks.
  __aicore__ inline int64_t Blocks(const Item& x) const {
    return x.k1 > x.k0 ? (x.k1 - x.k0 + t_->block_keys - 1) / t_->block_keys : 0;
  }

  // The AIC's hand-off order for unit x alone (by = 0), or for the pair x, y (two splits of one
  // item, y's by blocks <= x's): x's and y's blocks alternately, then x's last ones. Hand-off h
  // as its unit with k0 = the block's first key; HandOfY: whether it is one of y's.
  __aicore__ static inline bool HandOfY(int64_t by, int64_t h) { return h < 2 * by && h % 2 == 1; }
  __aicore__ inline Item Hand(const Item& x, const Item& y, int64_t by, int64_t h) const {
    Item u = HandOfY(by, h) ? y : x;
    u.k0 += (h < 2 * by ? h / 2 : h - by) * t_->block_keys;
    return u;
  }

  // L: the keys of every split of item x but the last (a multiple of split_align: whole blocks,
  // or whole key tiles, the split's last block then shorter).
  __aicore__ inline int64_t SplitKeys(const Item& x) const {
    return RoundUp((x.extent + t_->splits - 1) / t_->splits, t_->split_align);
  }

  __aicore__ inline Item Get(int64_t item) const {
    const LightningIndexerTiling& t = *t_;
    Item x{};
    const int64_t b = t.layout_query == 1 ? BatchOfItem(item) : item / t.groups_per_batch;
    x.batch = b;
    int64_t slab = 0;
    if (t.layout_query == 1) {  // TND: cumulative ends; batch B is the padding past the last end
      x.q_begin = b > 0 ? lengths_q_.Get(b - 1) : 0;
      if (b == t.batch) {
        slab = t.q_rows - x.q_begin;
      } else {
        x.act_s1 = lengths_q_.Get(b) - x.q_begin;
        slab = x.act_s1;
      }
    } else {
      x.q_begin = b * t.q_rows;
      slab = t.q_rows;
      x.act_s1 = lengths_q_.Present() ? lengths_q_.Get(b) : t.q_rows;
    }
    if (b < t.batch) {
      x.residual = residual_.Present() ? residual_.Get(b) : 0;
      if (t.layout_key == 1) {
        x.k_begin = b > 0 ? lengths_k_.Get(b - 1) : 0;
        x.act_s2 = lengths_k_.Get(b) - x.k_begin;
      } else if (t.layout_key == 0) {
        x.k_begin = b * t.key_rows;
        x.act_s2 = lengths_k_.Present() ? lengths_k_.Get(b) : t.key_rows;
      } else {
        x.act_s2 = lengths_k_.Get(b);
      }
    }
    x.r0 = t.layout_query == 1 ? (item - FirstItem(b)) * t.rows_per_group
                               : (item % t.groups_per_batch) * t.rows_per_group;
    x.slab_end = Min(x.r0 + t.rows_per_group, slab);
    x.real_end = Min(x.slab_end, x.act_s1);
    x.extent = x.real_end > x.r0 ? Limit(x, x.real_end - 1) : 0;
    x.k1 = x.extent;
    return x;
  }

  // TND items: batch b's row group g is item FirstItem(b) + g, FirstItem(b) = floor(q_begin / R) + b
  // (R = rows_per_group; for R = 1 the flat row itself): the items follow the flat rows, so equal
  // shares of them are equal shares of the rows, and the + b leaves room for each batch's partial
  // last group (at most ceil(T1 / R) + B items; a gap is an item without rows). Batch B holds the
  // rows past the last end.
  __aicore__ inline int64_t FirstItem(int64_t b) const {
    const int64_t r = t_->rows_per_group, q_begin = b > 0 ? lengths_q_.Get(b - 1) : 0;
    return r == 1 ? q_begin : q_begin / r + b;
  }

  // The last b in [0, B] with FirstItem(b) <= item. The ends are checked as non-decreasing before
  // anything is written; unchecked, the search still ends in [0, B].
  __aicore__ inline int64_t BatchOfItem(int64_t item) const {
    int64_t lo = 0, hi = t_->batch;
    while (lo < hi) {
      const int64_t mid = (lo + hi + 1) / 2;
      if (FirstItem(mid) <= item) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return lo;
  }

  // Keys visible to row r of the batch: [0, limit) (the shared rule, lightning_indexer_visibility.h).
  __aicore__ inline int64_t Limit(const Item& x, int64_t r) const {
    return LiVisibleKeys(t_->sparse_mode, x.act_s1, x.act_s2, r, t_->cmp_ratio, x.residual);
  }

 private:
  const LightningIndexerTiling* t_ = nullptr;
  IndexTensor lengths_q_, lengths_k_, residual_;
  int64_t begin_ = 0;
  int64_t end_ = 0;
};

}  // namespace lightning_indexer
