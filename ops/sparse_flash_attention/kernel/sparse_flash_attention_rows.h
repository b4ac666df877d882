// What every core of sparse_flash_attention agrees on: the geometry of a flat query row (its
// batch, act_q, act_kv, causal threshold and n: the contract's normalisation) and the share of
// rows of a group (AIC GetBlockIdx(), AIV GetBlockIdx() / GetTaskRatio()). The AIC and the two
// AIVs of a group walk the same rows in the same order: that keeps their hand-offs paired.
#pragma once
#include "kernel_operator.h"
#include "aop_kernel/core_share.h"
#include "kernel/sparse_flash_attention_tiling.h"

namespace sparse_flash_attention {

using AscendC::GlobalTensor;
using AscendC::LocalTensor;

constexpr int32_t kFractal = 16;  // rows (and 32-byte columns) of one L1 / L0 fractal

__aicore__ inline int64_t Min(int64_t a, int64_t b) { return a < b ? a : b; }
__aicore__ inline int64_t Max(int64_t a, int64_t b) { return a > b ? a : b; }
__aicore__ inline int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
__aicore__ inline int64_t CeilDiv(int64_t v, int64_t m) { return (v + m - 1) / m; }

// An int32 GM tensor read one entry at a time by the scalar unit (lengths, block table: inputs).
class Int32Gm {
 public:
  __aicore__ inline void Init(GM_ADDR data) {
    present_ = data != nullptr;
    if (present_) gm_.SetGlobalBuffer((__gm__ int32_t*)data);
  }
  __aicore__ inline bool Present() const { return present_; }
  __aicore__ inline int64_t Get(int64_t i) const { return static_cast<int64_t>(gm_.GetValue(i)); }

 private:
  GlobalTensor<int32_t> gm_;
  bool present_ = false;
};

// One flat query row q: BSND row b * S1 + r, TND row q of the cumulative ends.
struct Row {
  int64_t q;         // flat query row (also the row of sparse_indices and of the outputs)
  int64_t batch;     // B for a TND row past the last end
  bool in_batch;     // false: outside every batch (zero-filled)
  int64_t act_q;
  int64_t act_kv;
  int64_t r;         // row within the batch
  int64_t kv_base;   // first key row of the batch (BSND / TND), 0 for PA_BSND
  int64_t thr;       // positions < thr are in the window
  int64_t n;         // entries of the row read: min(K, ceil(thr / sbs)), 0 when thr <= 0
  // The unit: split `split` of the row reads entries [e0, e1) (splits = 1: [0, n), up to a -1)
  int64_t unit;
  int64_t split;
  int64_t e0, e1;
};

// The balanced split (row_tiles > 0): the first flat tile of group g's range, and the group
// whose range holds flat tile v (the last g with TileStart(g) <= v: empty ranges skipped).
__aicore__ inline int64_t TileStart(const SparseFlashAttentionTiling& t, int64_t rows, int64_t g) {
  return g * rows * t.row_tiles / t.block_dim;
}
__aicore__ inline int64_t GroupOfTile(const SparseFlashAttentionTiling& t, int64_t rows, int64_t v) {
  return ((v + 1) * t.block_dim - 1) / (rows * t.row_tiles);
}
__aicore__ inline int64_t FlatRows(const SparseFlashAttentionTiling& t) {
  return t.layout_query == 1 ? t.q_rows : t.batch * t.q_rows;
}
// The pieces (partials) of flat row q: splits (equal split) or the group ranges it meets.
__aicore__ inline int64_t PiecesOf(const SparseFlashAttentionTiling& t, int64_t q) {
  if (t.row_tiles <= 0) return t.splits;
  const int64_t rows = FlatRows(t);
  return GroupOfTile(t, rows, (q + 1) * t.row_tiles - 1) - GroupOfTile(t, rows, q * t.row_tiles) + 1;
}

// A group's units are handles Begin() .. End() - 1: unit numbers q * splits + s (equal split) or
// flat rows (balanced split: one unit per row its tile range meets); GetUnit gives x.unit, the
// unit's partial.
class Rows {
 public:
  __aicore__ inline void Init(const SparseFlashAttentionTiling& t, GM_ADDR lengths_q, GM_ADDR lengths_kv,
                              int64_t group) {
    t_ = &t;
    lengths_q_.Init(t.has_lengths_q ? lengths_q : nullptr);
    lengths_kv_.Init(t.has_lengths_kv ? lengths_kv : nullptr);
    group_ = group;
    if (t.row_tiles > 0) {
      const int64_t rows = FlatRows(t);
      lo_ = TileStart(t, rows, group);
      hi_ = TileStart(t, rows, group + 1);
      begin_ = lo_ / t.row_tiles;
      end_ = hi_ > lo_ ? (hi_ - 1) / t.row_tiles + 1 : begin_;
      return;
    }
    const aop_kernel::CoreShare share = aop_kernel::ShareOf(group, t.units_per_core, t.cores_with_extra);
    begin_ = share.begin;
    end_ = share.end;
  }
  // The flat row of handle u.
  __aicore__ inline int64_t RowOf(int64_t u) const { return t_->row_tiles > 0 ? u : u / t_->splits; }
  // The first entry of handle u's unit of a row of E = n entries (the guess before the check).
  __aicore__ inline int64_t FirstEntry(int64_t u, int64_t n) const {
    if (t_->row_tiles > 0) return (Max(lo_, u * t_->row_tiles) - u * t_->row_tiles) * n / t_->row_tiles;
    return u % t_->splits * n / t_->splits;
  }
  __aicore__ inline void SetEntries(GM_ADDR workspace) {
    entries_.SetGlobalBuffer((__gm__ int32_t*)(workspace + t_->entries_offset));
  }

  // Unit u: split u % splits of row u / splits (balanced: the piece of row u in this group's
  // range), with its entry range.
  __aicore__ inline Row GetUnit(int64_t u) {
    const bool balanced = t_->row_tiles > 0;
    Row x = Get(RowOf(u));
    if (balanced) {
      x.split = group_ - GroupOfTile(*t_, FlatRows(*t_), x.q * t_->row_tiles);
      x.unit = x.q * t_->splits + x.split;
    } else {
      x.unit = u;
      x.split = u % t_->splits;
    }
    x.e0 = 0;
    x.e1 = x.in_batch ? x.n : 0;
    if (t_->splits > 1 && x.in_batch && x.n > 0) {
      // E: the row's entries before its first -1, written by the check phase (its line may be
      // cached from an earlier launch: invalidated first)
      GlobalTensor<int32_t> e = entries_[static_cast<uint64_t>(x.q)];
      AscendC::DataCacheCleanAndInvalid<int32_t, AscendC::CacheLine::SINGLE_CACHE_LINE,
                                        AscendC::DcciDst::CACHELINE_OUT>(e);
      const int64_t entries = static_cast<int64_t>(e.GetValue(0));
      if (balanced) {
        const int64_t first = x.q * t_->row_tiles;
        x.e0 = (Max(lo_, first) - first) * entries / t_->row_tiles;
        x.e1 = (Min(hi_, first + t_->row_tiles) - first) * entries / t_->row_tiles;
      } else {
        x.e0 = x.split * entries / t_->splits;
        x.e1 = (x.split + 1) * entries / t_->splits;
      }
    }
    return x;
  }
  __aicore__ inline int64_t Begin() const { return begin_; }
  __aicore__ inline int64_t End() const { return end_; }
  __aicore__ inline int64_t Total() const { return FlatRows(*t_); }

  // The geometry of flat row q (lengths checked before any core reads through it).
  __aicore__ inline Row Get(int64_t q) const {
    const SparseFlashAttentionTiling& t = *t_;
    Row x{};
    x.q = q;
    int64_t q_begin = 0;
    if (t.layout_query == 1) {  // TND: the batch whose cumulative rows hold q
      x.batch = BatchOf(q);
      if (x.batch < t.batch) {
        q_begin = x.batch > 0 ? lengths_q_.Get(x.batch - 1) : 0;
        x.act_q = lengths_q_.Get(x.batch) - q_begin;
      }
    } else {
      x.batch = q / t.q_rows;
      q_begin = x.batch * t.q_rows;
      x.act_q = lengths_q_.Present() ? lengths_q_.Get(x.batch) : t.q_rows;
    }
    x.r = q - q_begin;
    x.in_batch = x.batch < t.batch && x.r < x.act_q;
    if (!x.in_batch) return x;
    KvOf(x.batch, x.act_kv, x.kv_base);
    x.thr = t.sparse_mode == 0 ? x.act_kv : x.act_kv - x.act_q + x.r + 1;
    x.n = x.thr > 0 ? Min(t.topk, CeilDiv(x.thr, t.sparse_block_size)) : 0;
    return x;
  }

  // act_kv and the first key row of batch b.
  __aicore__ inline void KvOf(int64_t b, int64_t& act_kv, int64_t& kv_base) const {
    const SparseFlashAttentionTiling& t = *t_;
    kv_base = 0;
    if (t.layout_kv == 1) {  // TND: cumulative ends
      kv_base = b > 0 ? lengths_kv_.Get(b - 1) : 0;
      act_kv = lengths_kv_.Get(b) - kv_base;
    } else if (t.layout_kv == 0) {
      kv_base = b * t.key_rows;
      act_kv = lengths_kv_.Present() ? lengths_kv_.Get(b) : t.key_rows;
    } else {
      act_kv = lengths_kv_.Get(b);
    }
  }

  // TND: the batch b with end[b - 1] <= q < end[b], B when q is past the last end.
  __aicore__ inline int64_t BatchOf(int64_t q) const {
    int64_t lo = 0, hi = t_->batch;  // the first b with end[b] > q
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      if (lengths_q_.Get(mid) > q) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return lo;
  }

 private:
  const SparseFlashAttentionTiling* t_ = nullptr;
  Int32Gm lengths_q_, lengths_kv_;
  GlobalTensor<int32_t> entries_;
  int64_t begin_ = 0;
  int64_t end_ = 0;
  int64_t group_ = 0;
  int64_t lo_ = 0, hi_ = 0;  // balanced split: the group's flat tiles
};

// The selected positions of a row in the contract's order (the first n entries; -1 stops; an
// entry whose block starts at or past thr is skipped; sbs consecutive positions per entry, cut
// at thr), read from GM by the scalar unit, a run of consecutive positions at a time.
class Positions {
 public:
  __aicore__ inline void Init(GM_ADDR sparse_indices, const SparseFlashAttentionTiling& t) {
    indices_.SetGlobalBuffer((__gm__ int32_t*)sparse_indices);
    sbs_ = t.sparse_block_size;
    topk_ = t.topk;
  }
  __aicore__ inline void Start(const Row& x) {
    base_ = x.q * topk_;
    n_ = x.e1;
    thr_ = x.thr;
    entry_ = x.e0;
    lo_ = hi_ = 0;
  }
  // Whether the row has another position (reads entries up to its next run).
  __aicore__ inline bool More() {
    while (lo_ >= hi_) {
      if (entry_ >= n_) return false;
      const int64_t v = static_cast<int64_t>(indices_.GetValue(base_ + entry_));
      ++entry_;
      if (v < 0) {  // -1 ends the row (< -1 is an error of the check phase: never reached)
        entry_ = n_;
        return false;
      }
      lo_ = v * sbs_;
      hi_ = Min(lo_ + sbs_, thr_);
    }
    return true;
  }
  // The next run [p, p + len) of at most `most` consecutive positions; false when the row has
  // no more.
  __aicore__ inline bool Next(int64_t most, int64_t& p, int64_t& len) {
    if (!More()) return false;
    p = lo_;
    len = Min(hi_ - lo_, most);
    lo_ += len;
    return true;
  }

 private:
  GlobalTensor<int32_t> indices_;
  int64_t sbs_ = 1, topk_ = 0;
  int64_t base_ = 0, n_ = 0, thr_ = 0, entry_ = 0, lo_ = 0, hi_ = 0;
};

}  // namespace sparse_flash_attention
