// A row's running top-k on the AIV: k_pad (score, index) pairs in UB, sorted by score. MergeRuns
// merges sorted runs into it with one MrgSort (MergeRunsTo: into a second list, no copy back);
// RowOut writes it (or an empty row) to the outputs.
// Ties: MrgSort keeps equal scores in list order (lower list first), the running list is the
// first list and the runs follow in the caller's order, so a caller that passes runs of larger
// indices after smaller ones sends ties to the smaller index.
#pragma once
#include "kernel/lightning_indexer_work.h"

namespace lightning_indexer {

constexpr uint32_t kMaxExtract = 255 * kSortGroup;  // Extract: repeatTime <= 255 (A2 docs)
constexpr int32_t kMaxMergeList = kLiMaxMergeList;  // kernel/lightning_indexer_tiling.h

// MrgSort lists the running list takes: k_pad <= 8192 goes in as up to 3 chunks of <= 4064 pairs.
__aicore__ inline int32_t TopkLists(int64_t k_pad) {
  return static_cast<int32_t>((k_pad + kMaxMergeList - 1) / kMaxMergeList);
}

// merged <- topk (k_pad pairs) and runs[0 .. n_runs) (counts[i] pairs each) in one sorted list
// (k_pad + the runs' pairs); its first k_pad pairs are their best k_pad. n_runs <= 4 -
// TopkLists(k_pad). Each chunk of the running list is sorted and the chunks are in order, so the
// merge keeps the list's order.
__aicore__ inline void MergeRunsTo(const LocalTensor<float>& merged, const LocalTensor<float>& topk, int64_t k_pad,
                                   const LocalTensor<float>* runs, const uint16_t* counts, int32_t n_runs) {
  const int32_t kp = static_cast<int32_t>(k_pad);
  uint16_t list_counts[4] = {0, 0, 0, 0};
  LocalTensor<float> lists[4];
  int32_t n_lists = 0;
  for (int32_t at = 0; at < kp; at += kMaxMergeList) {
    list_counts[n_lists] = static_cast<uint16_t>(kp - at < kMaxMergeList ? kp - at : kMaxMergeList);
    lists[n_lists++] = topk[static_cast<uint32_t>(at * 2)];
  }
  for (int32_t i = 0; i < n_runs; ++i) {
    list_counts[n_lists] = counts[i];
    lists[n_lists++] = runs[i];
  }
  const uint16_t valid = n_lists == 2 ? 0b11 : n_lists == 3 ? 0b111 : 0b1111;
  uint32_t sorted_num[4] = {0, 0, 0, 0};
  AscendC::MrgSort<float>(merged, AscendC::MrgSortSrcList<float>(lists[0], lists[1], lists[2], lists[3]),
                          list_counts, sorted_num, valid, 1);
  AscendC::PipeBarrier<PIPE_V>();
}

// topk (k_pad pairs) <- the best k_pad of topk and the runs, through `merged` (k_pad + the runs'
// pairs), copied back.
__aicore__ inline void MergeRuns(const LocalTensor<float>& topk, int64_t k_pad, const LocalTensor<float>& merged,
                                 const LocalTensor<float>* runs, const uint16_t* counts, int32_t n_runs) {
  MergeRunsTo(merged, topk, k_pad, runs, counts, n_runs);
  AscendC::DataCopy(topk, merged, static_cast<uint32_t>(k_pad * 2));
  AscendC::PipeBarrier<PIPE_V>();
}

// A row's result to the outputs (sparse_indices int32, sparse_values float32 when asked for),
// staged in UB (k_pad floats, then k_pad int32) that V may write.
class RowOut {
 public:
  __aicore__ inline void Init(GM_ADDR sparse_indices, GM_ADDR sparse_values, int64_t q_total,
                              const LightningIndexerTiling& t, AscendC::TPipe* pipe) {
    t_ = &t;
    pipe_ = pipe;
    indices_.SetGlobalBuffer((__gm__ int32_t*)sparse_indices, q_total * t.sparse_count);
    if (t.has_values) values_.SetGlobalBuffer((__gm__ float*)sparse_values, q_total * t.sparse_count);
  }

  // The first `count` pairs of the sorted list `topk`, then -1 / -inf.
  __aicore__ inline void Write(const LocalTensor<float>& topk, const LocalTensor<float>& staging, int64_t row,
                               int64_t count) {
    const uint32_t kp = static_cast<uint32_t>(t_->k_pad);
    LocalTensor<float> values = staging;
    LocalTensor<int32_t> indices = staging[kp].template ReinterpretCast<int32_t>();
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

  // A row that sees no key: -1 / -inf throughout.
  __aicore__ inline void Fill(const LocalTensor<float>& staging, int64_t row) {
    const uint32_t kp = static_cast<uint32_t>(t_->k_pad);
    LocalTensor<float> values = staging;
    LocalTensor<int32_t> indices = staging[kp].template ReinterpretCast<int32_t>();
    AscendC::Duplicate(values, -__builtin_huge_valf(), static_cast<int32_t>(kp));
    AscendC::Duplicate(indices, -1, static_cast<int32_t>(kp));
    CopyOut(values, indices, row);
  }

 private:
  template <AscendC::HardEvent kEvent>
  __aicore__ inline void Sync() {
    const int32_t id = static_cast<int32_t>(pipe_->FetchEventID(kEvent));
    AscendC::SetFlag<kEvent>(id);
    AscendC::WaitFlag<kEvent>(id);
  }

  // UB staging -> the outputs' row; the staging buffer is free again for V afterwards.
  __aicore__ inline void CopyOut(const LocalTensor<float>& values, const LocalTensor<int32_t>& indices, int64_t row) {
    Sync<AscendC::HardEvent::V_MTE3>();
    const AscendC::DataCopyExtParams params{1, static_cast<uint32_t>(t_->sparse_count * 4), 0, 0, 0};
    AscendC::DataCopyPad(indices_[static_cast<uint64_t>(row * t_->sparse_count)], indices, params);
    if (t_->has_values) AscendC::DataCopyPad(values_[static_cast<uint64_t>(row * t_->sparse_count)], values, params);
    Sync<AscendC::HardEvent::MTE3_V>();
  }

  const LightningIndexerTiling* t_ = nullptr;
  AscendC::TPipe* pipe_ = nullptr;
  GlobalTensor<int32_t> indices_;
  GlobalTensor<float> values_;
};

}  // namespace lightning_indexer
