// The end of a split launch (decode: an item's keys in `splits` ranges, each leaving its rows'
// partial top-k lists in the workspace, [units, rows_per_group, k_pad, 2]): after SyncAll of the
// AIVs, every AIV merges its share of the rows' lists and writes the rows' outputs.
// It runs on a TPipe of its own, built after the vector side's is destroyed: the row's running
// list in two buffers that take turns as MrgSort's source and target (no copy back after each
// merge), and a depth-2 VECIN queue of merge_pairs pairs, so the DMA of the next
// lists overlaps the MrgSort of these. The fixed DMA latency is paid per buffer load, not per list:
// one strided DMA brings as many whole lists as a buffer holds (MrgSort then takes the running
// list and up to 4 - TopkLists(k_pad) of them at once); a list longer than a MrgSort input comes in
// pieces, one buffer of pieces at a time.
// Only a list's first `pairs` = min(k_pad, keys of a split, keys the row sees) rounded up to 32 can
// hold keys (the rest are -inf, the first pairs' padding too), and splits that start at or past
// the row's causal limit hold none: neither is read.
// Prefix first: when the row's best keys spread over the splits, each list gives about
// K / lists of them, so the first pass merges only a prefix of each list (twice that share and a
// margin). It holds the row's top-k exactly when every list's last merged score is below the K-th
// best it found (every pair left out scores lower still); otherwise the whole lists are merged.
// Ties: the lists go in split order (split s holds smaller indices than split s + 1), a list's
// pieces in list order (a list keeps equal scores in index order), after the running list: ties go
// to the smaller index.
#pragma once
#include "kernel/lightning_indexer_topk.h"
#include "kernel/lightning_indexer_work.h"

namespace lightning_indexer {

// The partial lists of one row that can hold keys.
struct RowLists {
  int64_t first;   // float offset (in the partial lists) of split 0's list
  int64_t stride;  // floats from one split's list to the next
  int64_t count;   // splits whose list can hold keys
  int64_t pairs;   // leading pairs of a list that can (a multiple of 32, <= k_pad)
};

// One input buffer load: `blocks` bursts of block_pairs pairs, `gap_bytes` apart in GM, packed in
// UB; merged as runs of piece_pairs (the last one shorter).
struct Span {
  int64_t gm;  // float offset of the first burst
  int64_t blocks;
  int64_t block_pairs;
  int64_t gap_bytes;
  int64_t piece_pairs;
  bool ends_lists;  // each burst ends with the last pair taken from its list
};

class SplitMerge {
 public:
  __aicore__ inline void Init(const LightningIndexerTiling& t, const Work& work, const GlobalTensor<float>& partials,
                              GM_ADDR sparse_indices, GM_ADDR sparse_values, int64_t q_total) {
    t_ = &t;
    work_ = &work;
    partials_ = partials;
    const uint32_t kp = static_cast<uint32_t>(t.k_pad), mp = static_cast<uint32_t>(t.merge_pairs);
    pipe_.InitBuffer(list_buf_[0], (kp + mp) * 8);
    pipe_.InitBuffer(list_buf_[1], (kp + mp) * 8);
    pipe_.InitBuffer(runs_, 2, mp * 8);
    out_.Init(sparse_indices, sparse_values, q_total, t, &pipe_);
    runs_per_merge_ = 4 - TopkLists(t.k_pad);
    piece_cap_ = Min(kMaxMergeList, t.merge_pairs / runs_per_merge_ / kSortGroup * kSortGroup);
  }

  // The rows of split items, shared out over every AIV of the launch.
  __aicore__ inline void Process() {
    const int64_t me = AscendC::GetBlockIdx(), cores = AscendC::GetBlockNum() * AscendC::GetTaskRatio();
    int64_t task = 0;
    for (int64_t item = 0; item < t_->items; ++item) {
      const Item x = work_->Get(item);
      for (int64_t r = x.r0; r < x.real_end; ++r) {
        const int64_t limit = work_->Limit(x, r);
        if (limit == 0 || (task++ % cores) != me) continue;
        MergeRow(Lists(x, item, r, limit));
        out_.Write(list_buf_[cur_].Get<float>(), list_buf_[1 - cur_].Get<float>(), x.q_begin + r,
                   Min(t_->sparse_count, limit));
      }
    }
  }

 private:
  __aicore__ inline RowLists Lists(const Item& x, int64_t item, int64_t r, int64_t limit) const {
    const int64_t split_keys = work_->SplitKeys(x), kp = t_->k_pad;
    RowLists l;
    l.stride = t_->rows_per_group * kp * 2;
    l.first = item * t_->splits * l.stride + (r - x.r0) * kp * 2;
    l.count = Min(t_->splits, (limit + split_keys - 1) / split_keys);
    l.pairs = RoundUp(Min(Min(kp, split_keys), limit), kSortGroup);
    return l;
  }

  // Whole lists when one fits a MrgSort input, else pieces.
  __aicore__ inline int64_t Spans(const RowLists& l) const {
    if (l.pairs <= piece_cap_) {
      const int64_t per_span = t_->merge_pairs / l.pairs;
      return (l.count + per_span - 1) / per_span;
    }
    const int64_t span_pairs = runs_per_merge_ * piece_cap_;
    return l.count * ((l.pairs + span_pairs - 1) / span_pairs);
  }

  __aicore__ inline Span GetSpan(const RowLists& l, int64_t i) const {
    Span s;
    if (l.pairs <= piece_cap_) {
      const int64_t per_span = t_->merge_pairs / l.pairs;
      s.gm = l.first + i * per_span * l.stride;
      s.blocks = Min(per_span, l.count - i * per_span);
      s.block_pairs = l.pairs;
      s.gap_bytes = (l.stride - l.pairs * 2) * 4;
      s.piece_pairs = l.pairs;
      s.ends_lists = true;
    } else {
      const int64_t span_pairs = runs_per_merge_ * piece_cap_;
      const int64_t per_list = (l.pairs + span_pairs - 1) / span_pairs;
      const int64_t at = (i % per_list) * span_pairs;
      s.gm = l.first + (i / per_list) * l.stride + at * 2;
      s.blocks = 1;
      s.block_pairs = Min(span_pairs, l.pairs - at);
      s.gap_bytes = 0;
      s.piece_pairs = piece_cap_;
      s.ends_lists = at + s.block_pairs == l.pairs;
    }
    return s;
  }

  __aicore__ inline void Load(const Span& s) {
    LocalTensor<float> in = runs_.AllocTensor<float>();
    const AscendC::DataCopyExtParams params{static_cast<uint16_t>(s.blocks), static_cast<uint32_t>(s.block_pairs * 8),
                                            static_cast<uint32_t>(s.gap_bytes), 0, 0};
    AscendC::DataCopyPad(in, partials_[static_cast<uint64_t>(s.gm)], params,
                         AscendC::DataCopyPadExtParams<float>{false, 0, 0, 0});
    runs_.EnQue(in);
  }

  template <AscendC::HardEvent kEvent>
  __aicore__ inline void Sync() {
    const int32_t id = static_cast<int32_t>(pipe_.FetchEventID(kEvent));
    AscendC::SetFlag<kEvent>(id);
    AscendC::WaitFlag<kEvent>(id);
  }

  // list_buf_[cur_] <- the row's top-k: from the lists' prefixes when they hold it, else from the whole lists.
  __aicore__ inline void MergeRow(const RowLists& l) {
    const int64_t share = (t_->sparse_count + l.count - 1) / l.count;
    const int64_t prefix = RoundUp(2 * share, kSortGroup) + kSortGroup;
    if (prefix < l.pairs) {
      RowLists head = l;
      head.pairs = prefix;
      if (MergeLists(head, true)) return;
    }
    MergeLists(l, false);
  }

  // list_buf_[cur_] <- the best k_pad of the lists' first l.pairs pairs; each span's DMA is issued before the
  // last one is merged. With `check`: returns whether that is the best k_pad of the whole lists
  // (every list's last pair taken scores below the K-th best), else true.
  __aicore__ inline bool MergeLists(const RowLists& l, bool check) {
    cur_ = 0;
    AscendC::Duplicate(list_buf_[0].Get<float>(), -__builtin_huge_valf(), static_cast<int32_t>(t_->k_pad * 2));
    AscendC::PipeBarrier<PIPE_V>();
    float last_best = -__builtin_huge_valf();  // the best score of a list's last pair taken
    const int64_t spans = Spans(l);
    Load(GetSpan(l, 0));
    for (int64_t i = 0; i < spans; ++i) {
      const Span s = GetSpan(l, i);
      LocalTensor<float> in = runs_.DeQue<float>();
      if (check && s.ends_lists) {  // before the next DMA is issued: MTE2_S waits for this one only
        Sync<AscendC::HardEvent::MTE2_S>();
        for (int64_t b = 0; b < s.blocks; ++b) {
          const float last = in.GetValue(static_cast<uint32_t>(((b + 1) * s.block_pairs - 1) * 2));
          if (last > last_best) last_best = last;
        }
        Sync<AscendC::HardEvent::S_MTE2>();  // the buffer is written again two DMAs on
      }
      if (i + 1 < spans) Load(GetSpan(l, i + 1));
      const int64_t total = s.blocks * s.block_pairs;
      LocalTensor<float> runs[4];
      uint16_t counts[4] = {0, 0, 0, 0};
      int32_t n = 0;
      for (int64_t at = 0; at < total; at += s.piece_pairs) {
        runs[n] = in[static_cast<uint32_t>(at * 2)];
        counts[n++] = static_cast<uint16_t>(Min(s.piece_pairs, total - at));
        if (n == runs_per_merge_ || at + s.piece_pairs >= total) {
          MergeRunsTo(list_buf_[1 - cur_].Get<float>(), list_buf_[cur_].Get<float>(), t_->k_pad, runs, counts, n);
          cur_ = 1 - cur_;
          n = 0;
        }
      }
      runs_.FreeTensor(in);
    }
    if (!check) return true;
    Sync<AscendC::HardEvent::V_S>();
    const float kth = list_buf_[cur_].Get<float>().GetValue(static_cast<uint32_t>((t_->sparse_count - 1) * 2));
    Sync<AscendC::HardEvent::S_V>();  // the list may be rewritten next
    return last_best < kth;
  }

  const LightningIndexerTiling* t_ = nullptr;
  const Work* work_ = nullptr;
  AscendC::TPipe pipe_;
  AscendC::TBuf<AscendC::TPosition::VECCALC> list_buf_[2];  // the running list and the merge target, in turn
  int32_t cur_ = 0;                                          // which holds the running list
  AscendC::TQue<AscendC::TPosition::VECIN, 2> runs_;
  GlobalTensor<float> partials_;
  RowOut out_;
  int32_t runs_per_merge_ = 1;
  int64_t piece_cap_ = 0;
};

}  // namespace lightning_indexer
