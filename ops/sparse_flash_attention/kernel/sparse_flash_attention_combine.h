// The combine of split rows (splits > 1, after a SyncAll of the AIVs): every AIV takes an even
// share of the (row, head group of combine_heads) items. Per item, from the splits' partials
// (acc_s unnormalised, m_s, l_s per head; an empty split has m_s = -inf, l_s = 0):
//   M = max_s m_s,  w_s = exp(m_s - M),  L = sum_s w_s * l_s,
//   out = round(sum_s (w_s / L) * acc_s),  softmax_max = M,  softmax_sum = L,
// and zeros (out and lse) for a row without any position (M = -inf: every split empty, the same
// for all heads of the row). float32 throughout, one rounding of out. A row's splits are its
// pieces (PiecesOf: splits, or under the balanced split the group ranges the row meets).
#pragma once
#include "kernel/sparse_flash_attention_rows.h"

namespace sparse_flash_attention {

template <typename T>
class Combine {
 public:
  __aicore__ inline void Init(GM_ADDR attention_out, GM_ADDR softmax_max, GM_ADDR softmax_sum, GM_ADDR workspace,
                              const SparseFlashAttentionTiling& tiling) {
    t_ = tiling;
    out_.SetGlobalBuffer((__gm__ T*)attention_out);
    if (t_.has_lse) {
      max_.SetGlobalBuffer((__gm__ float*)softmax_max);
      sum_.SetGlobalBuffer((__gm__ float*)softmax_sum);
    }
    partials_.SetGlobalBuffer((__gm__ float*)(workspace + t_.partials_offset));
    const int64_t rows = FlatRows(t_);
    groups_ = CeilDiv(t_.heads, t_.combine_heads);
    const int64_t items = rows * groups_, aivs = 2 * static_cast<int64_t>(t_.block_dim);
    const aop_kernel::CoreShare share = aop_kernel::ShareOf(AscendC::GetBlockIdx(), items / aivs, items % aivs);
    begin_ = share.begin;
    end_ = share.end;
    const uint32_t hg = static_cast<uint32_t>(RoundUp(t_.combine_heads, 8)), d = static_cast<uint32_t>(t_.head_dim);
    const uint32_t hc = static_cast<uint32_t>(t_.combine_heads), splits = static_cast<uint32_t>(t_.splits);
    pipe_.InitBuffer(m_buf_, splits * hg * sizeof(float));
    pipe_.InitBuffer(l_buf_, splits * hg * sizeof(float));
    pipe_.InitBuffer(w_buf_, splits * hg * sizeof(float));
    pipe_.InitBuffer(big_m_buf_, hg * sizeof(float));
    pipe_.InitBuffer(big_l_buf_, hg * sizeof(float));
    pipe_.InitBuffer(zero_buf_, hg * sizeof(float));
    pipe_.InitBuffer(acc_buf_, hc * d * sizeof(float));
    pipe_.InitBuffer(o_in_, static_cast<uint32_t>(t_.combine_buffers), splits * hc * d * sizeof(float));
    pipe_.InitBuffer(y_out_, 2, hc * d * sizeof(T));
    AscendC::Duplicate(zero_buf_.Get<float>(), 0.0f, static_cast<int32_t>(hg));
    Sync<AscendC::HardEvent::V_MTE3>();
  }

  // With two buffers the next item's accs are loaded while this item is combined.
  __aicore__ inline void Process() {
    for (int64_t item = begin_; item < end_; ++item) Item(item);
  }

 private:
  template <AscendC::HardEvent kEvent>
  __aicore__ inline void Sync() {
    const int32_t id = static_cast<int32_t>(pipe_.FetchEventID(kEvent));
    AscendC::SetFlag<kEvent>(id);
    AscendC::WaitFlag<kEvent>(id);
  }

  // Offset of unit (q, s)'s partial in partials_.
  __aicore__ inline uint64_t Partial(int64_t q, int64_t s) const {
    return static_cast<uint64_t>((q * t_.splits + s) * t_.partial_floats);
  }

  __aicore__ inline void LoadItemAccs(int64_t item) {
    const int64_t g0 = item % groups_ * t_.combine_heads;
    LoadAccs(item / groups_, g0, Min(t_.combine_heads, t_.heads - g0), PiecesOf(t_, item / groups_));
  }

  // Item `item`: heads [g0, g0 + hc) of row q (with two buffers its accs, but the first item's,
  // were queued during the item before).
  __aicore__ inline void Item(int64_t item) {
    const int64_t q = item / groups_, g0 = item % groups_ * t_.combine_heads;
    const int64_t hc = Min(t_.combine_heads, t_.heads - g0), d = t_.head_dim, hg = RoundUp(t_.combine_heads, 8);
    const int64_t stats = t_.heads * d, mp = RoundUp(t_.heads, kStatsAlign);
    const LocalTensor<float> m = m_buf_.Get<float>(), l = l_buf_.Get<float>(), w = w_buf_.Get<float>();
    const LocalTensor<float> big_m = big_m_buf_.Get<float>(), big_l = big_l_buf_.Get<float>();
    const int64_t pieces = PiecesOf(t_, q);  // the row's partials (balanced split: 1 .. splits)
    Sync<AscendC::HardEvent::S_MTE2>();  // the last item's scalar reads of m / l
    Sync<AscendC::HardEvent::V_MTE2>();  // and its vector reads
    // m and l of every split: one strided copy each (a burst per split, hg floats apart in UB)
    const uint32_t hc_bytes = static_cast<uint32_t>(hc * sizeof(float));
    const uint32_t gap = static_cast<uint32_t>((t_.partial_floats - hc) * sizeof(float));
    const uint32_t ub_gap = static_cast<uint32_t>((hg - RoundUp(hc, 8)) / 8);  // 32-byte blocks
    AscendC::DataCopyExtParams params{static_cast<uint16_t>(pieces), hc_bytes, gap, ub_gap, 0};
    AscendC::DataCopyPadExtParams<float> pad{false, 0, 0, 0};
    AscendC::DataCopyPad(m, partials_[Partial(q, 0) + static_cast<uint64_t>(stats + g0)], params, pad);
    AscendC::DataCopyPad(l, partials_[Partial(q, 0) + static_cast<uint64_t>(stats + mp + g0)], params, pad);
    // issued now so their latency overlaps the weights' computation
    if (item == begin_ || t_.combine_buffers == 1) LoadItemAccs(item);
    Sync<AscendC::HardEvent::MTE2_S>();
    Sync<AscendC::HardEvent::MTE3_S>();  // the last item's lse copies read big_m / big_l
    for (int64_t h = 0; h < hc; ++h) {
      float best = m.GetValue(static_cast<uint32_t>(h));
      for (int64_t s = 1; s < pieces; ++s) {
        const float v = m.GetValue(static_cast<uint32_t>(s * hg + h));
        best = v > best ? v : best;
      }
      big_m.SetValue(static_cast<uint32_t>(h), best);
    }
    if (!(big_m.GetValue(0) > -__builtin_huge_valf())) {  // no split has a position: zeros
      LocalTensor<float> unused = o_in_.DeQue<float>();
      o_in_.FreeTensor(unused);
      if (item + 1 < end_ && t_.combine_buffers > 1) LoadItemAccs(item + 1);
      Zeros(q, g0, hc);
      return;
    }
    Sync<AscendC::HardEvent::S_V>();
    Sync<AscendC::HardEvent::MTE2_V>();
    // the next item's accs after the waits for m / l (they wait for every copy issued before them)
    if (item + 1 < end_ && t_.combine_buffers > 1) LoadItemAccs(item + 1);
    for (int64_t s = 0; s < pieces; ++s) {
      const uint32_t at = static_cast<uint32_t>(s * hg);
      AscendC::Sub(w[at], m[at], big_m, static_cast<int32_t>(hc));  // empty split: -inf -> weight 0
    }
    AscendC::PipeBarrier<PIPE_V>();
    for (int64_t s = 0; s < pieces; ++s) {
      const uint32_t at = static_cast<uint32_t>(s * hg);
      AscendC::Exp(w[at], w[at], static_cast<int32_t>(hc));
    }
    AscendC::PipeBarrier<PIPE_V>();
    const LocalTensor<float> acc = acc_buf_.Get<float>();
    AscendC::Duplicate(acc, 0.0f, static_cast<int32_t>(hc * d));
    AscendC::PipeBarrier<PIPE_V>();
    Sync<AscendC::HardEvent::V_S>();
    for (int64_t h = 0; h < hc; ++h) {
      float total = 0.0f;
      for (int64_t s = 0; s < pieces; ++s) {
        total += w.GetValue(static_cast<uint32_t>(s * hg + h)) * l.GetValue(static_cast<uint32_t>(s * hg + h));
      }
      big_l.SetValue(static_cast<uint32_t>(h), total);
    }
    LocalTensor<float> o = o_in_.DeQue<float>();
    for (int64_t s = 0; s < pieces; ++s) {
      if (!(l.GetValue(static_cast<uint32_t>(s * hg)) > 0.0f)) continue;  // an empty split (its acc is never written)
      for (int64_t h = 0; h < hc; ++h) {
        const float coef = w.GetValue(static_cast<uint32_t>(s * hg + h)) / big_l.GetValue(static_cast<uint32_t>(h));
        AscendC::Axpy(acc[static_cast<uint32_t>(h * d)], o[static_cast<uint32_t>((s * hc + h) * d)], coef,
                      static_cast<int32_t>(d));
      }
    }
    AscendC::PipeBarrier<PIPE_V>();
    o_in_.FreeTensor(o);
    LocalTensor<T> y = y_out_.AllocTensor<T>();
    AscendC::Cast(y, acc, AscendC::RoundMode::CAST_RINT, static_cast<int32_t>(hc * d));
    y_out_.EnQue(y);
    y = y_out_.DeQue<T>();
    AscendC::DataCopy(out_[static_cast<uint64_t>((q * t_.heads + g0) * d)], y, static_cast<uint32_t>(hc * d));
    y_out_.FreeTensor(y);
    if (t_.has_lse) {
      Sync<AscendC::HardEvent::S_MTE3>();
      WriteLse(big_m, big_l, q, g0, hc);
    }
  }

  // Heads [g0, g0 + hc) of every piece's acc: one strided copy ([pieces, hc, D] in UB). An
  // empty split's acc was never written: copied, never used.
  __aicore__ inline void LoadAccs(int64_t q, int64_t g0, int64_t hc, int64_t pieces) {
    const int64_t row_floats = hc * t_.head_dim;
    LocalTensor<float> o = o_in_.AllocTensor<float>();
    AscendC::DataCopyExtParams params{static_cast<uint16_t>(pieces), static_cast<uint32_t>(row_floats * 4),
                                      static_cast<uint32_t>((t_.partial_floats - row_floats) * 4), 0, 0};
    AscendC::DataCopyPadExtParams<float> pad{false, 0, 0, 0};
    AscendC::DataCopyPad(o, partials_[Partial(q, 0) + static_cast<uint64_t>(g0 * t_.head_dim)], params, pad);
    o_in_.EnQue(o);
  }

  __aicore__ inline void Zeros(int64_t q, int64_t g0, int64_t hc) {
    const int64_t d = t_.head_dim;
    LocalTensor<T> y = y_out_.AllocTensor<T>();
    AscendC::Duplicate(y.template ReinterpretCast<int16_t>(), static_cast<int16_t>(0), static_cast<int32_t>(hc * d));
    y_out_.EnQue(y);
    y = y_out_.DeQue<T>();
    AscendC::DataCopy(out_[static_cast<uint64_t>((q * t_.heads + g0) * d)], y, static_cast<uint32_t>(hc * d));
    y_out_.FreeTensor(y);
    if (t_.has_lse) WriteLse(zero_buf_.Get<float>(), zero_buf_.Get<float>(), q, g0, hc);
  }

  __aicore__ inline void WriteLse(const LocalTensor<float>& m, const LocalTensor<float>& l, int64_t q, int64_t g0,
                                  int64_t hc) {
    AscendC::DataCopyExtParams params{1, static_cast<uint32_t>(hc * sizeof(float)), 0, 0, 0};
    const uint64_t at = static_cast<uint64_t>(q * t_.heads + g0);
    AscendC::DataCopyPad(max_[at], m, params);
    AscendC::DataCopyPad(sum_[at], l, params);
  }

  static constexpr int64_t kStatsAlign = 8;  // m and l of a partial start 32-byte aligned
  AscendC::TPipe pipe_;
  AscendC::TQue<AscendC::TPosition::VECIN, 2> o_in_;  // every split's acc of an item (combine_buffers items)
  AscendC::TQue<AscendC::TPosition::VECOUT, 1> y_out_;
  AscendC::TBuf<AscendC::TPosition::VECCALC> m_buf_, l_buf_, w_buf_, big_m_buf_, big_l_buf_, zero_buf_, acc_buf_;
  GlobalTensor<T> out_;
  GlobalTensor<float> max_, sum_, partials_;
  SparseFlashAttentionTiling t_;
  int64_t groups_ = 1;
  int64_t begin_ = 0;
  int64_t end_ = 0;
};

}  // namespace sparse_flash_attention
