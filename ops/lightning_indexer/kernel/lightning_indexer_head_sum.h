// The float op's scorer for the shared AIV side (kernel/lightning_indexer_vector.h): a published
// GM slot holds ReLU(q . k^T) per (row, head) and key, [m_pad, block_pad] float32; an own row's
// score is
//   acc[j] = sum_h weights[r, h] * slot[r * N1 + h, j]
// (heads copied to UB head_chunk at a time through a double-buffered VECIN queue, the next
// chunk's copy issued first; per chunk one Mul per 64 keys over all its heads, then the heads
// summed pairwise, float32).
// A scorer gives the Vector: RowStride (floats of the slot per group row), Init (its UB buffers
// and GM views), Begin (a unit and its own rows), Ahead (before the block's slot is awaited: copies
// of the block's first row that do not read the slot), Queue (start a block row's first copy: the
// Vector's cross-block prefetch) and Score (the row's scores of the block into acc, releasing the
// slot after its last copy when asked).
#pragma once
#include "kernel/lightning_indexer_handshake.h"
#include "kernel/lightning_indexer_work.h"

namespace lightning_indexer {

constexpr uint32_t kBlockFloats = 8;   // floats of one 32-byte DataBlock
constexpr int32_t kRepeatFloats = 64;  // floats of one 256-byte vector repeat

// One own row of one published block, as the Vector hands it to its scorer.
struct BlockRow {
  uint64_t base;    // float offset in the AIC's workspace of the row's first slot row
  int64_t r;        // own row (0 .. rows of the unit's share)
  int64_t row;      // flat query row
  const Item* x;    // the hand-off's unit (k0 = the block's first key)
  int64_t visible;  // keys of the block the row sees (> 0)
  int64_t cols;     // visible rounded up to 32
};

// W: weights type (the query dtype or float).
template <typename W>
class HeadSum {
 public:
  struct Inputs {
    GM_ADDR weights;  // [B, S1, N1] | [T1, N1]
  };
  __aicore__ inline static int64_t RowStride(const LightningIndexerTiling& t) { return t.heads * t.block_pad; }

  __aicore__ inline void Init(AscendC::TPipe& pipe, const LightningIndexerTiling& t, const GlobalTensor<float>& slots,
                              const Inputs& in, int64_t q_total) {
    pipe_ = &pipe;
    t_ = &t;
    slots_ = slots;
    weights_.SetGlobalBuffer((__gm__ W*)in.weights, q_total * t.heads);
    const uint32_t bp = static_cast<uint32_t>(t.block_pad);
    const uint32_t rows = static_cast<uint32_t>(t.rows_per_aiv), n1 = static_cast<uint32_t>(t.heads);
    pipe.InitBuffer(scores_, 2, t.head_chunk * bp * sizeof(float));
    pipe.InitBuffer(w_raw_buf_, RoundUp(rows * n1 * sizeof(W), 32));
    pipe.InitBuffer(w_buf_, RoundUp(rows * n1 * sizeof(float), 32));
    pipe.InitBuffer(w_blocks_buf_, rows * n1 * kBlockFloats * sizeof(float));
  }

  // The weights of own rows [row, row + rows) of unit x.
  __aicore__ inline void Begin(const Item& /*x*/, int64_t row, int64_t rows) {
    LoadWeights(row * t_->heads, static_cast<uint32_t>(rows * t_->heads));
  }

  __aicore__ inline void Ahead(const BlockRow& /*b*/) {}  // every copy reads the slot
  __aicore__ inline void Queue(const BlockRow& b) { CopyHeads(b.base, 0); }

  // acc[0, cols) = sum_h w[r, h] * scores[base + h * bp + (0 .. cols)]. Per chunk of heads (rows
  // of bp floats in UB): one Mul per 64 columns over all its heads (a repeat per head, the head's
  // weight block as src1), then the rows summed pairwise (the wider the vector instruction, the
  // smaller the share of its fixed start). `queued`: the first chunk is already in scores_.
  // release >= 0: the slot to release once the row's last copy is issued.
  __aicore__ inline void Score(const LocalTensor<float>& acc, const BlockRow& b, bool queued, int32_t release,
                               VectorHandshake& handshake) {
    const int32_t bp = t_->block_pad, n1 = static_cast<int32_t>(t_->heads), hc = t_->head_chunk;
    const int32_t c = static_cast<int32_t>(b.cols);
    const uint8_t row_blocks = static_cast<uint8_t>(bp / kBlockFloats);  // bp <= 512: <= 64 blocks
    if (!queued) CopyHeads(b.base, 0);
    for (int32_t h0 = 0; h0 < n1; h0 += hc) {
      const int32_t heads = n1 - h0 < hc ? n1 - h0 : hc;
      if (h0 + hc < n1) {
        CopyHeads(b.base, h0 + hc);  // the next chunk's DMA overlaps this chunk's sum
      } else if (release >= 0) {
        handshake.Release(release);  // on MTE2: after the copies
      }
      LocalTensor<float> s = scores_.DeQue<float>();
      const LocalTensor<float> w =
          w_blocks_buf_.Get<float>()[static_cast<uint32_t>((b.r * n1 + h0) * kBlockFloats)];
      const AscendC::BinaryRepeatParams per_head(1, 1, 0, row_blocks, row_blocks, 1);
      for (int32_t k = 0; k < c; k += kRepeatFloats) {
        const uint64_t mask = static_cast<uint64_t>(c - k < kRepeatFloats ? c - k : kRepeatFloats);
        AscendC::Mul(s[static_cast<uint32_t>(k)], s[static_cast<uint32_t>(k)], w, mask, static_cast<uint8_t>(heads),
                     per_head);
      }
      AscendC::PipeBarrier<PIPE_V>();
      for (int32_t n = heads; n > 1;) {  // rows [0, half) += rows [n - half, n)
        const int32_t half = n / 2;
        AscendC::Add(s, s, s[static_cast<uint32_t>((n - half) * bp)], half * bp);
        AscendC::PipeBarrier<PIPE_V>();
        n -= half;
      }
      if (h0 == 0) {
        AscendC::DataCopy(acc, s, static_cast<uint32_t>(c));
      } else {
        AscendC::Add(acc, acc, s, c);
      }
      AscendC::PipeBarrier<PIPE_V>();
      scores_.FreeTensor(s);
    }
  }

 private:
  template <AscendC::HardEvent kEvent>
  __aicore__ inline void Sync() {
    const int32_t id = static_cast<int32_t>(pipe_->FetchEventID(kEvent));
    AscendC::SetFlag<kEvent>(id);
    AscendC::WaitFlag<kEvent>(id);
  }

  // weights[first .. first + count) as float32 in w_buf_, and as weight blocks in w_blocks_buf_.
  __aicore__ inline void LoadWeights(int64_t first, uint32_t count) {
    const AscendC::DataCopyExtParams params{1, static_cast<uint32_t>(count * sizeof(W)), 0, 0, 0};
    LocalTensor<float> w = w_buf_.Get<float>();
    Sync<AscendC::HardEvent::S_MTE2>();  // the last item's scalar reads of the weights are done
    if constexpr (sizeof(W) == sizeof(float)) {
      AscendC::DataCopyPad(w, weights_[first], params, AscendC::DataCopyPadExtParams<float>{false, 0, 0, 0});
      Sync<AscendC::HardEvent::MTE2_S>();
      Sync<AscendC::HardEvent::V_S>();  // the last unit's Muls have read the weight blocks
    } else {
      LocalTensor<W> raw = w_raw_buf_.Get<W>();
      AscendC::DataCopyPad(raw, weights_[first], params, AscendC::DataCopyPadExtParams<W>{false, 0, 0, 0});
      Sync<AscendC::HardEvent::MTE2_V>();
      Sync<AscendC::HardEvent::S_V>();
      AscendC::Cast(w, raw, AscendC::RoundMode::CAST_NONE, count);
      Sync<AscendC::HardEvent::V_S>();  // also: the last unit's Muls have read the weight blocks
    }
    // Each weight as one 32-byte block of 8 copies: a Mul repeat over one head reads its weight
    // through a block stride of 0.
    LocalTensor<float> blocks = w_blocks_buf_.Get<float>();
    for (uint32_t i = 0; i < count; ++i) {
      const float wi = w.GetValue(i);
      for (uint32_t k = 0; k < kBlockFloats; ++k) blocks.SetValue(i * kBlockFloats + k, wi);
    }
    Sync<AscendC::HardEvent::S_V>();
  }

  // Heads [h0, h0 + head_chunk) of the slot rows at `base` -> UB, queued in scores_.
  __aicore__ inline void CopyHeads(uint64_t base, int32_t h0) {
    const int32_t n1 = static_cast<int32_t>(t_->heads), hc = t_->head_chunk;
    const int32_t heads = n1 - h0 < hc ? n1 - h0 : hc;
    LocalTensor<float> s = scores_.AllocTensor<float>();
    AscendC::DataCopy(s, slots_[base + static_cast<uint64_t>(h0) * t_->block_pad],
                      static_cast<uint32_t>(heads * t_->block_pad));
    scores_.EnQue(s);
  }

  AscendC::TPipe* pipe_ = nullptr;
  const LightningIndexerTiling* t_ = nullptr;
  AscendC::TQue<AscendC::TPosition::VECIN, 2> scores_;  // depth 2: the next head chunk is queued early
  AscendC::TBuf<AscendC::TPosition::VECCALC> w_raw_buf_, w_buf_, w_blocks_buf_;
  GlobalTensor<W> weights_;
  GlobalTensor<float> slots_;
};

}  // namespace lightning_indexer
