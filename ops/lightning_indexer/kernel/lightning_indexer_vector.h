// The AIV side of lightning_indexer and lightning_indexer_quant: the two AIVs of a group split the
// rows of each work item (AIV 0 the first rows_per_aiv, AIV 1 the rest), or with halves (one row
// per group: decode) the keys: the group takes two splits of an item at once, AIV s works on split
// 2p + s. Per key block published by the AIC (a GM slot) and per own row:
//   acc[j] = the row's scores of the block, by the Scorer (the float op's head sum,
//            kernel/lightning_indexer_head_sum.h; the quant op's key scales, kernel/liq_key_scale.h)
//   keys at or past the row's limit (causal / act_s2) -> -inf, Sort the block's (score, index)
//   pairs, and MrgSort them into the row's running top-k (k_pad pairs in UB) when the block's best
//   beats the current K-th score; Extract (<= 255 repeats per call) and copy out at the item's end
//   (kernel/lightning_indexer_topk.h). Split items: each split's rows leave their partial lists in
//   GM, merged after a SyncAll by kernel/lightning_indexer_merge.h.
// Hand-offs: the AIV releases a slot right after issuing its last copy out of it (the release
// is ordered behind that copy on MTE2), and once the vector work of a block's last copy is
// issued it already awaits its next own block (releasing the other AIV's blocks in between, in
// the AIC's publish order) and queues that block's first copy (Scorer::Queue, for the first row
// that sees a key): the copy overlaps the current block's mask, Sort and merge (Pass, Prefetch). It never
// holds more than one slot, so the credits of kernel/lightning_indexer_handshake.h suffice.
// Ties: Sort and MrgSort keep equal scores in input order (lower position, lower list first);
// block indices ascend and the running list (smaller indices) comes first, so ties go to the
// smaller index. Every hand-off between pipes is explicit (queue events, SetFlag/WaitFlag with
// FetchEventID ids, PipeBarrier<PIPE_V> between dependent vector ops): nothing relies on
// --cce-auto-sync.
#pragma once
#include "kernel/lightning_indexer_handshake.h"
#include "kernel/lightning_indexer_head_sum.h"
#include "kernel/lightning_indexer_merge.h"
#include "kernel/lightning_indexer_topk.h"
#include "kernel/lightning_indexer_work.h"

namespace lightning_indexer {

// Scorer: HeadSum<W> (kernel/lightning_indexer_head_sum.h) or the quant op's KeyScale.
template <typename Scorer>
class Vector {
 public:
  __aicore__ inline void Init(const typename Scorer::Inputs& in, GM_ADDR lengths_q, GM_ADDR lengths_k,
                              GM_ADDR residual, GM_ADDR sparse_indices, GM_ADDR sparse_values, GM_ADDR workspace,
                              const LightningIndexerTiling& tiling) {
    t_ = tiling;
    const int64_t group = AscendC::GetBlockIdx() / AscendC::GetTaskRatio();
    sub_ = AscendC::GetSubBlockIdx();
    work_.Init(t_, lengths_q, lengths_k, residual, group);
    q_total_ = QueryRowsTotal(t_);
    sparse_indices_ = sparse_indices;
    sparse_values_ = sparse_values;
    out_.Init(sparse_indices, sparse_values, q_total_, t_, &pipe_);
    workspace_.SetGlobalBuffer((__gm__ float*)workspace + group * t_.workspace_per_aic, t_.workspace_per_aic);
    if (t_.splits > 1) {
      partials_.SetGlobalBuffer((__gm__ float*)workspace + t_.partials_offset,
                                t_.workspace_floats - t_.partials_offset);
    }

    const uint32_t bp = static_cast<uint32_t>(t_.block_pad), kp = static_cast<uint32_t>(t_.k_pad);
    const uint32_t rows = static_cast<uint32_t>(t_.rows_per_aiv);
    scorer_.Init(pipe_, t_, workspace_, in, q_total_);
    pipe_.InitBuffer(acc_buf_, bp * sizeof(float));
    pipe_.InitBuffer(iota_buf_, bp * sizeof(int32_t));
    pipe_.InitBuffer(idx_buf_, bp * sizeof(int32_t));
    pipe_.InitBuffer(sorted_buf_, bp * 8);
    pipe_.InitBuffer(sort_tmp_buf_, bp * 8);
    pipe_.InitBuffer(merge_buf_, (kp + MergeTake()) * 8);
    pipe_.InitBuffer(topk_buf_, rows * kp * 8);

    LocalTensor<int32_t> iota = iota_buf_.Get<int32_t>();
    for (uint32_t i = 0; i < bp; ++i) iota.SetValue(i, static_cast<int32_t>(i));
    Sync<AscendC::HardEvent::S_V>();
  }

  __aicore__ inline void Process() {
    handshake_.Init(t_.slots);
    if (t_.halves) {
      for (int64_t u = work_.Begin(); u < work_.End(); u += 2) ProcessPair(u);
    } else {
      for (int64_t u = work_.Begin(); u < work_.End(); ++u) ProcessUnit(work_.GetUnit(u), u);
    }
    if (t_.splits > 1) {
      pipe_.Destroy();  // its UB goes to the merge's pipe
      // Every AIV's partial lists are in GM. isAIVOnly = true in a MIX kernel synchronises the
      // AIVs only (SyncAll.md): what is wanted here, the AICs are done with these units.
      AscendC::SyncAll<true>();
      SplitMerge merge;
      merge.Init(t_, work_, partials_, sparse_indices_, sparse_values_, q_total_);
      merge.Process();
    }
  }

 private:
  // src pipe -> dst pipe inside the core, with an event id from the pipe's pool.
  template <AscendC::HardEvent kEvent>
  __aicore__ inline void Sync() {
    const int32_t id = static_cast<int32_t>(pipe_.FetchEventID(kEvent));
    AscendC::SetFlag<kEvent>(id);
    AscendC::WaitFlag<kEvent>(id);
  }

  // Pairs of a sorted block that can still enter the top-K: at most k_pad (and a MrgSort list).
  __aicore__ inline uint32_t MergeTake() const {
    return static_cast<uint32_t>(Min(Min(t_.block_pad, t_.k_pad), kMaxMergeList));
  }

  // The rows of unit x an AIV works on: share 0 (the first rows_per_aiv) or share 1 (the rest).
  struct Rows {
    int64_t mine0, mine1;  // own rows [mine0, mine1) of the group
    int64_t real1;         // own real rows end: [mine0, real1)
    int64_t rows;          // real1 - mine0
  };
  __aicore__ inline Rows OwnRows(const Item& x, int64_t share) const {
    Rows o;
    o.mine0 = Min(x.r0 + share * t_.rows_per_aiv, x.slab_end);
    o.mine1 = Min(o.mine0 + (share == 0 ? t_.rows_per_aiv : t_.rows_per_group - t_.rows_per_aiv), x.slab_end);
    o.real1 = Max(o.mine0, Min(o.mine1, x.real_end));
    o.rows = o.real1 - o.mine0;
    return o;
  }

  // The hand-offs the AIC publishes for a unit or (halves) a pair of units, in its order, and
  // how far this AIV has awaited them.
  struct Pass {
    Item x, y;
    int64_t by;       // y's blocks: 0 for a single unit
    int64_t count;    // hand-offs
    bool pair;        // AIV s scores unit s of the pair's blocks; else every block
    Rows o;           // the own rows of the scored unit
    int64_t awaited;  // hand-offs [0, awaited) are awaited
    int32_t slot;     // the slot of hand-off awaited - 1
    bool queued;      // its first row's first copy is queued (Scorer::Queue: prefetched)
  };

  // Unit x (split x.split of an item), AIV `sub_`'s share of the rows; both AIVs take every block.
  __aicore__ inline void ProcessUnit(const Item& x, int64_t u) {
    Pass p{x, x, 0, work_.Blocks(x), false, OwnRows(x, sub_), 0, 0, false};
    BeginUnit(x, p.o);
    ScorePass(p);
    EndUnit(x, u, p.o);
  }

  // Halves: units u and u + 1 (splits 2p, 2p + 1 of one item; rows_per_group = 1). The AIC
  // alternates their blocks (kernel/lightning_indexer_cube.h); AIV s works on unit u + s, all its
  // rows, and frees the other unit's slots at once. Both lists are partial lists of the split merge.
  __aicore__ inline void ProcessPair(int64_t u) {
    const Item x = work_.GetUnit(u), y = work_.GetUnit(u + 1);
    const Item& mine = sub_ == 0 ? x : y;
    const int64_t bx = work_.Blocks(x), by = work_.Blocks(y);  // by <= bx: y is the later split
    Pass p{x, y, by, bx + by, true, OwnRows(mine, 0), 0, 0, false};
    BeginUnit(mine, p.o);
    ScorePass(p);
    EndUnit(mine, u + sub_, p.o);
  }

  __aicore__ inline void ScorePass(Pass& p) {
    for (int64_t h = NextMine(p, 0); h < p.count; h = NextMine(p, h + 1)) {
      if (h >= p.awaited) {  // else the last block's prefetch has awaited it
        Ahead(p, h);
        AwaitThrough(p, h);
      }
      ScoreBlock(p, h);
    }
    if (p.awaited < p.count) AwaitThrough(p, p.count - 1);  // the other AIV's last blocks
  }

  __aicore__ inline Item Hand(const Pass& p, int64_t h) const { return work_.Hand(p.x, p.y, p.by, h); }

  // The first hand-off from h on whose block this AIV scores (p.count: none).
  __aicore__ inline int64_t NextMine(const Pass& p, int64_t h) const {
    while (h < p.count && p.pair && (Work::HandOfY(p.by, h) ? 1 : 0) != sub_) ++h;
    return h;
  }

  // Awaits the hand-offs up to h in order, releasing the other AIV's (all but a scored h) at once.
  __aicore__ inline void AwaitThrough(Pass& p, int64_t h) {
    for (; p.awaited <= h; ++p.awaited) {
      const int32_t slot = handshake_.Await();
      if (p.awaited == h && NextMine(p, h) == h) {
        p.slot = slot;
        p.queued = false;
      } else {
        handshake_.Release(slot);
      }
    }
  }

  // Cross-block prefetch, once the current block's last head chunk is issued: await the next
  // own block and queue its first head chunk, so the copy overlaps this block's mask, Sort and
  // merge instead of delaying the next block's first Mul. The current slot is already released
  // (after its last copy), so the AIV holds one slot at a time: any credit count suffices.
  __aicore__ inline void Prefetch(Pass& p, int64_t h) {
    const int64_t next = NextMine(p, h + 1);
    if (next >= p.count) return;
    Ahead(p, next);
    AwaitThrough(p, next);
    const Item x = Hand(p, next);
    const int64_t r = FirstRow(x, p.o, x.k0);
    if (r >= p.o.rows) return;
    scorer_.Queue(Row(p.slot, x, p.o, r));
    p.queued = true;
  }

  // Before awaiting own hand-off h: the scorer's copies that do not read the slot, for the
  // block's first row (the row its next Queue is for).
  __aicore__ inline void Ahead(const Pass& p, int64_t h) {
    const Item x = Hand(p, h);
    const int64_t r = FirstRow(x, p.o, x.k0);
    if (r < p.o.rows) scorer_.Ahead(Row(0, x, p.o, r));
  }

  __aicore__ inline void BeginUnit(const Item& x, const Rows& o) {
    if (o.rows > 0 && x.extent > 0) {
      scorer_.Begin(x, x.q_begin + o.mine0, o.rows);
      AscendC::Duplicate(topk_buf_.Get<float>(), -__builtin_huge_valf(), static_cast<int32_t>(o.rows * t_.k_pad * 2));
      AscendC::PipeBarrier<PIPE_V>();
    }
  }

  // Keys of block j0 (in [j0, min(j0 + block_keys, x.k1))) own row r sees.
  __aicore__ inline int64_t Visible(const Item& x, const Rows& o, int64_t r, int64_t j0) const {
    return Min(Max(work_.Limit(x, o.mine0 + r) - j0, 0), Min(t_.block_keys, x.k1 - j0));
  }

  // The first own row that sees a key of block j0 (o.rows: none).
  __aicore__ inline int64_t FirstRow(const Item& x, const Rows& o, int64_t j0) const {
    int64_t r = 0;
    while (r < o.rows && Visible(x, o, r, j0) == 0) ++r;
    return r;
  }

  // Own row r of hand-off x (in `slot`) for the scorer: its slot rows (group row gr at
  // gr * Scorer::RowStride in the slot), its query row and the keys it sees.
  __aicore__ inline BlockRow Row(int32_t slot, const Item& x, const Rows& o, int64_t r) const {
    BlockRow b;
    b.base = static_cast<uint64_t>(slot) * t_.slot_floats +
             static_cast<uint64_t>(o.mine0 + r - x.r0) * static_cast<uint64_t>(Scorer::RowStride(t_));
    b.r = r;
    b.row = x.q_begin + o.mine0 + r;
    b.x = &x;
    b.visible = Visible(x, o, r, x.k0);
    b.cols = RoundUp(b.visible, kSortGroup);
    return b;
  }

  // Hand-off h (awaited, in p.slot) into the own rows' lists; releases the slot after its last
  // copy and prefetches the next own block before the last row's mask.
  __aicore__ inline void ScoreBlock(Pass& p, int64_t h) {
    const Item x = Hand(p, h);
    const int64_t j0 = x.k0;
    const int32_t slot = p.slot;
    const int64_t first = FirstRow(x, p.o, j0);
    int64_t last = first - 1;
    for (int64_t r = first; r < p.o.rows; ++r) {
      if (Visible(x, p.o, r, j0) > 0) last = r;
    }
    if (last < first) {  // no own row sees the block
      handshake_.Release(slot);
      return;
    }
    for (int64_t r = first; r <= last; ++r) {
      const BlockRow b = Row(slot, x, p.o, r);
      if (b.visible == 0) continue;
      const int64_t visible = b.visible, cols = b.cols;
      scorer_.Score(acc_buf_.Get<float>(), b, p.queued, r == last ? slot : -1, handshake_);
      p.queued = false;
      if (r == last) Prefetch(p, h);
      MaskTail(visible, cols);
      SortBlock(j0, cols);
      MergeBlock(topk_buf_.Get<float>()[static_cast<uint32_t>(r * t_.k_pad * 2)], Min(cols, MergeTake()));
    }
  }

  // Unsplit: the own rows' outputs. Split: each real row that sees a key leaves its partial list
  // (the top-k of keys [k0, k1)) in GM for SplitMerge; split 0 writes the other rows.
  __aicore__ inline void EndUnit(const Item& x, int64_t u, const Rows& o) {
    const int64_t kp = t_.k_pad;
    for (int64_t r = 0; r < o.rows; ++r) {
      const int64_t limit = work_.Limit(x, o.mine0 + r);
      const LocalTensor<float> topk = topk_buf_.Get<float>()[static_cast<uint32_t>(r * kp * 2)];
      if (x.extent > 0 && limit > 0) {
        if (t_.splits > 1) {
          SavePartial(topk, (u * t_.rows_per_group + o.mine0 + r - x.r0) * kp * 2);
        } else {
          out_.Write(topk, merge_buf_.Get<float>(), x.q_begin + o.mine0 + r, Min(t_.sparse_count, limit));
        }
      } else if (x.split == 0) {
        out_.Fill(merge_buf_.Get<float>(), x.q_begin + o.mine0 + r);
      }
    }
    if (x.split == 0) {
      for (int64_t r = o.real1; r < o.mine1; ++r) out_.Fill(merge_buf_.Get<float>(), x.q_begin + r);
    }
  }

  __aicore__ inline void SavePartial(const LocalTensor<float>& topk, int64_t at) {
    Sync<AscendC::HardEvent::V_MTE3>();
    AscendC::DataCopy(partials_[static_cast<uint64_t>(at)], topk, static_cast<uint32_t>(t_.k_pad * 2));
    Sync<AscendC::HardEvent::MTE3_V>();  // the list's buffer is rewritten by the next unit
  }

  // acc[visible, cols): keys past the row's causal limit / act_s2 (and the block's padding) -> -inf.
  __aicore__ inline void MaskTail(int64_t visible, int64_t cols) {
    if (visible >= cols) return;
    LocalTensor<float> acc = acc_buf_.Get<float>();
    const int64_t head_end = Min(RoundUp(visible, 8), cols);
    if (head_end > visible) {
      Sync<AscendC::HardEvent::V_S>();
      for (int64_t j = visible; j < head_end; ++j) acc.SetValue(static_cast<uint32_t>(j), -__builtin_huge_valf());
      Sync<AscendC::HardEvent::S_V>();
    }
    if (head_end < cols) {
      AscendC::Duplicate(acc[static_cast<uint32_t>(head_end)], -__builtin_huge_valf(),
                         static_cast<int32_t>(cols - head_end));
      AscendC::PipeBarrier<PIPE_V>();
    }
  }

  // Sorts the block's (score, j0 + i) pairs (acc, cols of them) into sorted_buf_.
  __aicore__ inline void SortBlock(int64_t j0, int64_t cols) {
    const int32_t c = static_cast<int32_t>(cols);
    LocalTensor<int32_t> idx = idx_buf_.Get<int32_t>();
    AscendC::Adds(idx, iota_buf_.Get<int32_t>(), static_cast<int32_t>(j0), c);
    AscendC::PipeBarrier<PIPE_V>();
    LocalTensor<float> sorted = sorted_buf_.Get<float>();
    LocalTensor<float> tmp = sort_tmp_buf_.Get<float>();
    AscendC::Sort<float, true>(sorted, acc_buf_.Get<float>(), idx.ReinterpretCast<uint32_t>(), tmp, c / kSortGroup);
    Sync<AscendC::HardEvent::V_S>();
  }

  // Merges the sorted block (n <= MergeTake() pairs in sorted_buf_) into the row's running list
  // when its best score beats the K-th best so far (a tie would lose: the block's indices are
  // larger). The caller has ordered the block's writes before the scalar unit.
  __aicore__ inline void MergeBlock(const LocalTensor<float>& topk, int64_t n) {
    const LocalTensor<float> run = sorted_buf_.Get<float>();
    const float best = run.GetValue(0);
    const float kth = topk.GetValue(static_cast<uint32_t>((t_.sparse_count - 1) * 2));
    Sync<AscendC::HardEvent::S_V>();
    if (!(best > kth)) return;
    const uint16_t count = static_cast<uint16_t>(n);
    MergeRuns(topk, t_.k_pad, merge_buf_.Get<float>(), &run, &count, 1);
  }

  AscendC::TPipe pipe_;
  Scorer scorer_;
  AscendC::TBuf<AscendC::TPosition::VECCALC> acc_buf_, iota_buf_, idx_buf_, sorted_buf_, sort_tmp_buf_, merge_buf_,
      topk_buf_;
  GlobalTensor<float> workspace_, partials_;
  GM_ADDR sparse_indices_ = nullptr;
  GM_ADDR sparse_values_ = nullptr;
  int64_t q_total_ = 0;
  RowOut out_;
  Work work_;
  VectorHandshake handshake_;
  LightningIndexerTiling t_;
  int64_t sub_ = 0;
};

}  // namespace lightning_indexer
