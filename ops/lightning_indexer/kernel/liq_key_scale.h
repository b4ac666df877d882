// lightning_indexer_quant's scorer for the shared AIV side (kernel/lightning_indexer_vector.h; the
// interface: kernel/lightning_indexer_head_sum.h). The AIC has already reduced the heads
// (kernel/liq_cube.h): a published slot holds one float32 row per query row,
// s[j] = sum_h wq[h] * a[h, j]; the AIV's part is
//   acc[j] = s[j] * (float(ks(j)) * 2^10)   (the contract's NPU numerics: the key scale after the
//            head sum; the 2^10 undoes Fixpipe's 2^-10, exactly: the op's scores, as sparse_values)
// for the keys the row sees. The slot row and the block's key scales (through block_table for
// PA_BSND, one DMA per cache block the block touches) are copied through two double-buffered
// VECIN queues, the scales of a block's first row before its slot is awaited (Ahead: they do not
// depend on the AIC); only visible keys' scales are read (those of other keys may be anything).
#pragma once
#include "kernel/lightning_indexer_head_sum.h"
#include "kernel/liq_pairs.h"

namespace lightning_indexer {

class KeyScale {
 public:
  struct Inputs {
    GM_ADDR key_scale;    // PA_BSND [num_blocks, block_size(, 1)(, 1)] | BSND [B, S2, 1] | TND [T2, 1]; float16
    GM_ADDR block_table;  // [B, max_blocks] (PA_BSND)
  };
  __aicore__ inline static int64_t RowStride(const LightningIndexerTiling& t) { return t.block_pad; }

  __aicore__ inline void Init(AscendC::TPipe& pipe, const LightningIndexerTiling& t, const GlobalTensor<float>& slots,
                              const Inputs& in, int64_t /*q_total*/) {
    t_ = &t;
    slots_ = slots;
    ks_.SetGlobalBuffer((__gm__ half*)in.key_scale, KeyRowsTotal(t));
    table_.Init(in.block_table, t.table_bytes);
    const uint32_t bp = static_cast<uint32_t>(t.block_pad);
    pipe.InitBuffer(row_q_, 2, bp * sizeof(float));
    pipe.InitBuffer(ks_q_, 2, bp * sizeof(half));
    pipe.InitBuffer(ks_f_, bp * sizeof(float));
    pipe.InitBuffer(order_, bp * sizeof(float));
    pipe.InitBuffer(order_sorted_, bp * 8);
    pipe.InitBuffer(order_keys_, bp * sizeof(float));
    InitOrder(pipe, bp);
    // The check phase's copies into the UB these buffers reuse (PIPE_MTE2 does not order
    // overlapping moves by itself).
    AscendC::PipeBarrier<PIPE_MTE2>();
  }

  __aicore__ inline void Begin(const Item& /*x*/, int64_t /*row*/, int64_t /*rows*/) {}

  // The block's key scales (and their block-table reads) before its slot is awaited (after the
  // verdict): off the path from the AIC's hand-off to the score. The next Queue is for this row.
  __aicore__ inline void Ahead(const BlockRow& b) {
    QueueScales(b);
    ahead_ = true;
  }

  __aicore__ inline void Queue(const BlockRow& b) {
    LocalTensor<float> s = row_q_.AllocTensor<float>();
    AscendC::DataCopy(s, slots_[b.base], static_cast<uint32_t>(b.cols));
    row_q_.EnQue(s);
    if (!ahead_) QueueScales(b);
    ahead_ = false;
  }

  // acc[0, visible) = slot row * ks; the slot is released (release >= 0) once its copy is issued.
  __aicore__ inline void Score(const LocalTensor<float>& acc, const BlockRow& b, bool queued, int32_t release,
                               VectorHandshake& handshake) {
    if (!queued) Queue(b);
    if (release >= 0) handshake.Release(release);  // on MTE2: after the row's copy
    const int32_t n = static_cast<int32_t>(b.visible);
    LocalTensor<half> k = ks_q_.DeQue<half>();
    const LocalTensor<float> kf = ks_f_.Get<float>();
    AscendC::Cast(kf, k, AscendC::RoundMode::CAST_NONE, n);
    ks_q_.FreeTensor(k);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Muls(kf, kf, kUndoDeqScale, n);
    LocalTensor<float> s = row_q_.DeQue<float>();
    RestoreOrder(s, b);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Mul(acc, s, kf, n);
    AscendC::PipeBarrier<PIPE_V>();
    row_q_.FreeTensor(s);
  }

 private:
  __aicore__ inline void QueueScales(const BlockRow& b) {
    LocalTensor<half> k = ks_q_.AllocTensor<half>();
    CopyScales(k, *b.x, b.x->k0, b.visible);
    ks_q_.EnQue(k);
  }

  // Sort keys that put a paired group's scores back in key order: -PairedKey(q) at position q of
  // every group of 32 (Sort32 sorts each 32 in descending order). Written as two groups by the
  // scalar unit, repeated by one Adds (its source repeat stride 0).
  __aicore__ inline void InitOrder(AscendC::TPipe& pipe, uint32_t bp) {
    const LocalTensor<float> first = order_keys_.Get<float>();
    constexpr int32_t kRepeat = 64;  // floats of one 256-byte repeat: two groups
    for (int32_t q = 0; q < kRepeat; ++q) first.SetValue(q, -static_cast<float>(PairedKey(q % kPairGroup)));
    const int32_t id = static_cast<int32_t>(pipe.FetchEventID(AscendC::HardEvent::S_V));
    AscendC::SetFlag<AscendC::HardEvent::S_V>(id);
    AscendC::WaitFlag<AscendC::HardEvent::S_V>(id);
    AscendC::Adds(order_.Get<float>(), first, 0.0f, static_cast<uint64_t>(kRepeat),
                  static_cast<uint8_t>(bp / kRepeat), AscendC::UnaryRepeatParams(1, 1, 8, 0));
    AscendC::PipeBarrier<PIPE_V>();
  }

  // The row's slot scores [0, cols) in key order: the block's paired tiles (all its full tiles,
  // kernel/liq_pairs.h) sorted back per group of 32 by key, the scores' bits riding as the
  // index, taken out by Extract.
  __aicore__ inline void RestoreOrder(const LocalTensor<float>& s, const BlockRow& b) {
    const LightningIndexerTiling& t = *t_;
    if (!PairedTile(t, t.tile_keys)) return;
    const int64_t nb = Min(t.block_keys, b.x->k1 - b.x->k0);
    const int64_t paired = Min(nb / t.tile_keys * t.tile_keys, b.cols);
    if (paired == 0) return;
    const int32_t groups = static_cast<int32_t>(paired / kPairGroup);
    const LocalTensor<float> sorted = order_sorted_.Get<float>();
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Sort32(sorted, order_.Get<float>(), s.ReinterpretCast<uint32_t>(), groups);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Extract(order_keys_.Get<float>(), s.ReinterpretCast<uint32_t>(), sorted, groups);
  }

  // ks of keys [j0, j0 + n) of x's batch into dst (32-byte aligned runs: j0 and every cache
  // block's start are multiples of 16 keys from j0).
  __aicore__ inline void CopyScales(const LocalTensor<half>& dst, const Item& x, int64_t j0, int64_t n) {
    const LightningIndexerTiling& t = *t_;
    const AscendC::DataCopyPadExtParams<half> none{false, 0, 0, static_cast<half>(0)};
    if (t.layout_key != 2) {  // BSND / TND: the batch's keys are consecutive rows
      const AscendC::DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(half)), 0, 0, 0};
      AscendC::DataCopyPad(dst, ks_[x.k_begin + j0], p, none);
      return;
    }
    for (int64_t j = j0; j < j0 + n;) {  // PA_BSND: a run per cache block
      const int64_t in_block = j % t.block_size, len = Min(t.block_size - in_block, j0 + n - j);
      const int64_t entry = x.batch * t.max_blocks + j / t.block_size;
      const int64_t block = table_.Get(entry);
      const AscendC::DataCopyExtParams p{1, static_cast<uint32_t>(len * sizeof(half)), 0, 0, 0};
      AscendC::DataCopyPad(dst[static_cast<uint32_t>(j - j0)], ks_[block * t.block_size + in_block], p, none);
      j += len;
    }
  }

  static constexpr float kUndoDeqScale = 1024.0f;  // 2^10: Fixpipe's DEQF16 scale was 2^-10

  const LightningIndexerTiling* t_ = nullptr;
  AscendC::TQue<AscendC::TPosition::VECIN, 2> row_q_, ks_q_;  // depth 2: the next block's copies queue early
  AscendC::TBuf<AscendC::TPosition::VECCALC> ks_f_;
  AscendC::TBuf<AscendC::TPosition::VECCALC> order_, order_sorted_, order_keys_;  // RestoreOrder's
  GlobalTensor<float> slots_;
  GlobalTensor<half> ks_;
  IndexTensor table_;
  bool ahead_ = false;  // the next Queue's key scales are queued (Ahead)
};

}  // namespace lightning_indexer
