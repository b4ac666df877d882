// The AIV side of lightning_indexer: the two AIVs of a group split the rows of each work item
// (AIV 0 the first rows_per_aiv, AIV 1 the rest). Per key block published by the AIC (a GM slot
// [m, block_pad] of ReLU(q . k^T)) and per own row:
//   acc[j] = sum_h weights[r, h] * slot[r * N1 + h, j]   (heads copied to UB head_chunk at a time
//            through a double-buffered VECIN queue; Muls + Add per head, float32)
//   keys at or past the row's limit (causal / act_s2) -> -inf, Sort the block's (score, index)
//   pairs, and MrgSort them into the row's running top-k (k_pad pairs in UB) when the block's best
//   beats the current K-th score; Extract (<= 255 repeats per call) and copy out at the item's end.
// Ties: Sort and MrgSort keep equal scores in input order (lower position, lower list first);
// block indices ascend and the running list (smaller indices) comes first, so ties go to the
// smaller index. Every hand-off between pipes is explicit (queue events, SetFlag/WaitFlag with
// FetchEventID ids, PipeBarrier<PIPE_V> between dependent vector ops): nothing relies on
// --cce-auto-sync.
#pragma once
#include "kernel/lightning_indexer_handshake.h"
#include "kernel/lightning_indexer_work.h"

namespace lightning_indexer {

constexpr uint32_t kMaxExtract = 255 * kSortGroup;  // Extract: repeatTime <= 255 (A2 docs)
constexpr int32_t kMaxMergeList = 4064;             // MrgSort takes lists of at most 4095 pairs (A2 docs)

// W: weights type (the query dtype or float).
template <typename W>
class Vector {
 public:
  __aicore__ inline void Init(GM_ADDR weights, GM_ADDR lengths_q, GM_ADDR lengths_k, GM_ADDR sparse_indices,
                              GM_ADDR sparse_values, GM_ADDR workspace, const LightningIndexerTiling& tiling) {
    t_ = tiling;
    const int64_t group = AscendC::GetBlockIdx() / AscendC::GetTaskRatio();
    sub_ = AscendC::GetSubBlockIdx();
    work_.Init(t_, lengths_q, lengths_k, group);
    const int64_t q_total = t_.layout_query == 1 ? t_.q_rows : t_.batch * t_.q_rows;
    weights_.SetGlobalBuffer((__gm__ W*)weights, q_total * t_.heads);
    indices_.SetGlobalBuffer((__gm__ int32_t*)sparse_indices, q_total * t_.sparse_count);
    if (t_.has_values) values_.SetGlobalBuffer((__gm__ float*)sparse_values, q_total * t_.sparse_count);
    workspace_.SetGlobalBuffer((__gm__ float*)workspace + group * t_.workspace_per_aic, t_.workspace_per_aic);
    if (t_.splits > 1) {
      partials_.SetGlobalBuffer((__gm__ float*)workspace + t_.partials_offset,
                                t_.workspace_floats - t_.partials_offset);
    }

    const uint32_t bp = static_cast<uint32_t>(t_.block_pad), kp = static_cast<uint32_t>(t_.k_pad);
    const uint32_t rows = static_cast<uint32_t>(t_.rows_per_aiv), n1 = static_cast<uint32_t>(t_.heads);
    pipe_.InitBuffer(scores_, 2, t_.head_chunk * bp * sizeof(float));
    pipe_.InitBuffer(acc_buf_, bp * sizeof(float));
    pipe_.InitBuffer(iota_buf_, bp * sizeof(int32_t));
    pipe_.InitBuffer(idx_buf_, bp * sizeof(int32_t));
    pipe_.InitBuffer(sorted_buf_, bp * 8);
    pipe_.InitBuffer(sort_tmp_buf_, bp * 8);
    pipe_.InitBuffer(merge_buf_, (kp + MergeTake()) * 8);
    pipe_.InitBuffer(topk_buf_, rows * kp * 8);
    pipe_.InitBuffer(w_raw_buf_, RoundUp(rows * n1 * sizeof(W), 32));
    pipe_.InitBuffer(w_buf_, RoundUp(rows * n1 * sizeof(float), 32));

    LocalTensor<int32_t> iota = iota_buf_.Get<int32_t>();
    for (uint32_t i = 0; i < bp; ++i) iota.SetValue(i, static_cast<int32_t>(i));
    Sync<AscendC::HardEvent::S_V>();
  }

  __aicore__ inline void Process() {
    for (int64_t u = work_.Begin(); u < work_.End(); ++u) ProcessUnit(work_.GetUnit(u), u);
    if (t_.splits > 1) {
      // Every AIV's partial lists are in GM. isAIVOnly = true in a MIX kernel synchronises the
      // AIVs only (SyncAll.md): what is wanted here, the AICs are done with these units.
      AscendC::SyncAll<true>();
      MergeSplits();
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

  // Unit x (split x.split of an item): own rows [mine0, mine1) of the group, real ones up to
  // real_end. Unsplit: the rows' outputs. Split: each real row that sees a key leaves its partial
  // list (the top-k of keys [k0, k1)) in GM for MergeSplits; split 0 writes the other rows.
  __aicore__ inline void ProcessUnit(const Item& x, int64_t u) {
    const int64_t mine0 = Min(x.r0 + sub_ * t_.rows_per_aiv, x.slab_end);
    const int64_t mine1 = Min(mine0 + (sub_ == 0 ? t_.rows_per_aiv : t_.rows_per_group - t_.rows_per_aiv), x.slab_end);
    const int64_t real1 = Max(mine0, Min(mine1, x.real_end));
    const int64_t rows = real1 - mine0;
    const int64_t kp = t_.k_pad, n1 = t_.heads;
    const bool split = t_.splits > 1;
    if (rows > 0 && x.extent > 0) {
      LoadWeights((x.q_begin + mine0) * n1, static_cast<uint32_t>(rows * n1));
      AscendC::Duplicate(topk_buf_.Get<float>(), -__builtin_huge_valf(), static_cast<int32_t>(rows * kp * 2));
      AscendC::PipeBarrier<PIPE_V>();
    }
    for (int64_t j0 = x.k0; j0 < x.k1; j0 += t_.block_keys) {  // both AIVs take every block
      const int64_t nb = Min(t_.block_keys, x.k1 - j0);
      const int32_t slot = handshake_.Await();
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t visible = Min(Max(work_.Limit(x, mine0 + r) - j0, 0), nb);
        if (visible == 0) continue;
        const int64_t cols = RoundUp(visible, kSortGroup);
        BlockScores(slot, mine0 + r - x.r0, r, visible, cols);
        SortBlock(j0, cols);
        MergeRun(topk_buf_.Get<float>()[static_cast<uint32_t>(r * kp * 2)], sorted_buf_.Get<float>(),
                 Min(cols, MergeTake()));
      }
      handshake_.Release(slot);
    }
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t limit = work_.Limit(x, mine0 + r);
      const LocalTensor<float> topk = topk_buf_.Get<float>()[static_cast<uint32_t>(r * kp * 2)];
      if (x.extent > 0 && limit > 0) {
        if (split) {
          SavePartial(topk, (u * t_.rows_per_group + mine0 + r - x.r0) * kp * 2);
        } else {
          WriteRow(topk, x.q_begin + mine0 + r, Min(t_.sparse_count, limit));
        }
      } else if (x.split == 0) {
        FillRow(x.q_begin + mine0 + r);
      }
    }
    if (x.split == 0) {
      for (int64_t r = real1; r < mine1; ++r) FillRow(x.q_begin + r);
    }
  }

  __aicore__ inline void SavePartial(const LocalTensor<float>& topk, int64_t at) {
    Sync<AscendC::HardEvent::V_MTE3>();
    AscendC::DataCopy(partials_[static_cast<uint64_t>(at)], topk, static_cast<uint32_t>(t_.k_pad * 2));
    Sync<AscendC::HardEvent::MTE3_V>();  // the list's buffer is rewritten by the next unit
  }

  // After SyncAll: the rows of split items, shared out over every AIV of the launch: each merges
  // its row's partial lists in split order (split s holds smaller indices than split s + 1, and
  // the running list is MrgSort's first list, so ties still go to the smaller index), a run of
  // block_pad pairs at a time, and stops reading a list once its run cannot beat the K-th score.
  __aicore__ inline void MergeSplits() {
    const int64_t kp = t_.k_pad, bp = t_.block_pad;
    const int64_t me = AscendC::GetBlockIdx(), cores = AscendC::GetBlockNum() * AscendC::GetTaskRatio();
    LocalTensor<float> topk = topk_buf_.Get<float>();
    LocalTensor<float> run = sorted_buf_.Get<float>();
    int64_t task = 0;
    for (int64_t item = 0; item < t_.items; ++item) {
      const Item x = work_.Get(item);
      for (int64_t r = x.r0; r < x.real_end; ++r) {
        const int64_t limit = work_.Limit(x, r);
        if (limit == 0 || (task++ % cores) != me) continue;
        AscendC::Duplicate(topk, -__builtin_huge_valf(), static_cast<int32_t>(kp * 2));
        AscendC::PipeBarrier<PIPE_V>();
        for (int64_t s = 0; s < t_.splits; ++s) {
          const int64_t list = ((item * t_.splits + s) * t_.rows_per_group + r - x.r0) * kp * 2;
          for (int64_t c = 0; c < kp; c += bp) {
            const int64_t n = Min(bp, kp - c);
            Sync<AscendC::HardEvent::V_MTE2>();  // the last run was merged ...
            Sync<AscendC::HardEvent::S_MTE2>();  // ... and its best score read
            AscendC::DataCopy(run, partials_[static_cast<uint64_t>(list + c * 2)], static_cast<uint32_t>(n * 2));
            Sync<AscendC::HardEvent::MTE2_V>();
            Sync<AscendC::HardEvent::MTE2_S>();
            Sync<AscendC::HardEvent::V_S>();  // the running list's last update
            if (!MergeRun(topk, run, n)) break;  // the rest of this list scores lower still
          }
        }
        WriteRow(topk, x.q_begin + r, Min(t_.sparse_count, limit));
      }
    }
  }

  // weights[first .. first + count) as float32 in w_buf_.
  __aicore__ inline void LoadWeights(int64_t first, uint32_t count) {
    const AscendC::DataCopyExtParams params{1, static_cast<uint32_t>(count * sizeof(W)), 0, 0, 0};
    LocalTensor<float> w = w_buf_.Get<float>();
    Sync<AscendC::HardEvent::S_MTE2>();  // the last item's scalar reads of the weights are done
    if constexpr (sizeof(W) == sizeof(float)) {
      AscendC::DataCopyPad(w, weights_[first], params, AscendC::DataCopyPadExtParams<float>{false, 0, 0, 0});
      Sync<AscendC::HardEvent::MTE2_S>();
    } else {
      LocalTensor<W> raw = w_raw_buf_.Get<W>();
      AscendC::DataCopyPad(raw, weights_[first], params, AscendC::DataCopyPadExtParams<W>{false, 0, 0, 0});
      Sync<AscendC::HardEvent::MTE2_V>();
      Sync<AscendC::HardEvent::S_V>();
      AscendC::Cast(w, raw, AscendC::RoundMode::CAST_NONE, count);
      Sync<AscendC::HardEvent::V_S>();
    }
  }

  // acc[0, cols) = sum_h w[r, h] * slot[gr * N1 + h, 0 .. cols), -inf from `visible` on.
  __aicore__ inline void BlockScores(int32_t slot, int64_t gr, int64_t r, int64_t visible, int64_t cols) {
    const int32_t bp = t_.block_pad, n1 = static_cast<int32_t>(t_.heads), hc = t_.head_chunk;
    const int32_t c = static_cast<int32_t>(cols);
    LocalTensor<float> acc = acc_buf_.Get<float>();
    LocalTensor<float> w = w_buf_.Get<float>();
    const uint64_t base = static_cast<uint64_t>(slot) * t_.slot_floats + static_cast<uint64_t>(gr * n1) * bp;
    for (int32_t h0 = 0; h0 < n1; h0 += hc) {
      const int32_t heads = n1 - h0 < hc ? n1 - h0 : hc;
      LocalTensor<float> s = scores_.AllocTensor<float>();
      AscendC::DataCopy(s, workspace_[base + static_cast<uint64_t>(h0) * bp], static_cast<uint32_t>(heads * bp));
      scores_.EnQue(s);
      s = scores_.DeQue<float>();
      for (int32_t h = 0; h < heads; ++h) {
        const float wh = w.GetValue(static_cast<uint32_t>(r * n1 + h0 + h));
        LocalTensor<float> sh = s[static_cast<uint32_t>(h * bp)];
        if (h0 + h == 0) {
          AscendC::Muls(acc, sh, wh, c);
        } else {
          AscendC::Muls(sh, sh, wh, c);
          AscendC::PipeBarrier<PIPE_V>();
          AscendC::Add(acc, acc, sh, c);
        }
        AscendC::PipeBarrier<PIPE_V>();
      }
      scores_.FreeTensor(s);
    }
    // keys past the row's causal limit / act_s2 (and the block's padding): -inf
    if (visible < cols) {
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

  // Merges a sorted run of n (<= MergeTake()) pairs into the row's running list when the run's
  // best score beats the K-th best so far (a tie would lose: the run's indices are larger).
  // The caller has ordered the run's writes before the scalar unit. Returns whether it merged.
  __aicore__ inline bool MergeRun(const LocalTensor<float>& topk, const LocalTensor<float>& run, int64_t n) {
    const int32_t kp = static_cast<int32_t>(t_.k_pad);
    const float best = run.GetValue(0);
    const float kth = topk.GetValue(static_cast<uint32_t>((t_.sparse_count - 1) * 2));
    Sync<AscendC::HardEvent::S_V>();
    if (!(best > kth)) return false;
    // The running list (k_pad <= 8192) goes in as up to 3 consecutive chunks of <= 4064 pairs:
    // each chunk is sorted and the chunks are in order, so the merge keeps the list's order
    // (equal scores: lower list first) and the run, the last list, loses ties.
    LocalTensor<float> merged = merge_buf_.Get<float>();
    uint16_t counts[4] = {0, 0, 0, 0};
    LocalTensor<float> lists[4];
    int32_t n_lists = 0;
    for (int32_t at = 0; at < kp; at += kMaxMergeList) {
      counts[n_lists] = static_cast<uint16_t>(kp - at < kMaxMergeList ? kp - at : kMaxMergeList);
      lists[n_lists++] = topk[static_cast<uint32_t>(at * 2)];
    }
    counts[n_lists] = static_cast<uint16_t>(n);
    lists[n_lists++] = run;
    const uint16_t valid = n_lists == 2 ? 0b11 : n_lists == 3 ? 0b111 : 0b1111;
    uint32_t sorted_num[4] = {0, 0, 0, 0};
    AscendC::MrgSort<float>(merged, AscendC::MrgSortSrcList<float>(lists[0], lists[1], lists[2], lists[3]), counts,
                            sorted_num, valid, 1);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::DataCopy(topk, merged, static_cast<uint32_t>(kp * 2));
    AscendC::PipeBarrier<PIPE_V>();
    return true;
  }

  // The first `count` pairs of the row's list, then -1 / -inf, to the outputs.
  __aicore__ inline void WriteRow(const LocalTensor<float>& topk, int64_t row, int64_t count) {
    const uint32_t kp = static_cast<uint32_t>(t_.k_pad);
    LocalTensor<float> values = merge_buf_.Get<float>();
    LocalTensor<int32_t> indices = values[kp].template ReinterpretCast<int32_t>();
    for (uint32_t at = 0; at < kp; at += kMaxExtract) {  // Extract takes at most 255 repeats of 32 pairs
      const uint32_t pairs = kp - at < kMaxExtract ? kp - at : kMaxExtract;
      AscendC::Extract(values[at], indices[at].ReinterpretCast<uint32_t>(), topk[at * 2],
                       static_cast<int32_t>(pairs / kSortGroup));
    }
    AscendC::PipeBarrier<PIPE_V>();
    const int64_t head_end = Min(RoundUp(count, 8), kp);
    if (head_end > count) {
      Sync<AscendC::HardEvent::V_S>();
      for (int64_t j = count; j < head_end; ++j) indices.SetValue(static_cast<uint32_t>(j), -1);
      Sync<AscendC::HardEvent::S_V>();
    }
    if (head_end < static_cast<int64_t>(kp)) {
      AscendC::Duplicate(indices[static_cast<uint32_t>(head_end)], -1, static_cast<int32_t>(kp - head_end));
    }
    CopyOut(values, indices, row);
  }

  __aicore__ inline void FillRow(int64_t row) {
    const uint32_t kp = static_cast<uint32_t>(t_.k_pad);
    LocalTensor<float> values = merge_buf_.Get<float>();
    LocalTensor<int32_t> indices = values[kp].template ReinterpretCast<int32_t>();
    AscendC::Duplicate(values, -__builtin_huge_valf(), static_cast<int32_t>(kp));
    AscendC::Duplicate(indices, -1, static_cast<int32_t>(kp));
    CopyOut(values, indices, row);
  }

  // UB staging -> the outputs' row; the staging buffer is free again for V afterwards.
  __aicore__ inline void CopyOut(const LocalTensor<float>& values, const LocalTensor<int32_t>& indices, int64_t row) {
    Sync<AscendC::HardEvent::V_MTE3>();
    const AscendC::DataCopyExtParams params{1, static_cast<uint32_t>(t_.sparse_count * 4), 0, 0, 0};
    AscendC::DataCopyPad(indices_[static_cast<uint64_t>(row * t_.sparse_count)], indices, params);
    if (t_.has_values) AscendC::DataCopyPad(values_[static_cast<uint64_t>(row * t_.sparse_count)], values, params);
    Sync<AscendC::HardEvent::MTE3_V>();
  }

  AscendC::TPipe pipe_;
  AscendC::TQue<AscendC::TPosition::VECIN, 1> scores_;
  AscendC::TBuf<AscendC::TPosition::VECCALC> acc_buf_, iota_buf_, idx_buf_, sorted_buf_, sort_tmp_buf_, merge_buf_,
      topk_buf_, w_raw_buf_, w_buf_;
  GlobalTensor<W> weights_;
  GlobalTensor<int32_t> indices_;
  GlobalTensor<float> values_, workspace_, partials_;
  Work work_;
  VectorHandshake handshake_;
  LightningIndexerTiling t_;
  int64_t sub_ = 0;
};

}  // namespace lightning_indexer
