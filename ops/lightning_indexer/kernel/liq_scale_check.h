// lightning_indexer_quant's in-kernel data checks of the scales: the host's check_data and
// check_data_kernel (host/liq_validate.cpp), deferred into the float op's all-or-nothing check
// phase (kernel/lightning_indexer_check.h: the same slots, SyncAll and verdict):
//   query_dequant_scale of every row in a batch: finite and >= 0             kLiqQueryScaleInvalid
//   key_dequant_scale of every key some row sees: finite and >= 0            kLiqKeyScaleInvalid
//   |weights * query_dequant_scale| < 65520 (rounds to a finite float16)     kLiqWeightScaleOverflow
// A clean chunk costs vector instructions only: the test is on the values' bit patterns (exact
// whatever the hardware does with NaN, infinities or -0 in float compares), reduced by one
// ReduceMax. Only when it fires does the scalar unit walk the chunk for the first offending
// element that counts (scales of rows outside every batch may be anything).
// Where: the query scales and products on the AIVs' weights x scales pass (kernel/liq_weights.h:
// the rows it already holds in UB); the key scales in the check phase (DataCheck's extra check),
// split over the AIVs by flat (batch, key) position. Errors come in the host's order: the
// earliest phase, then the lowest AIV, whose share comes first in that order.
#pragma once
#include "kernel_operator.h"
#include "aop_kernel/check_slots.h"
#include "kernel/liq_tiling.h"
#include "kernel/lightning_indexer_work.h"

namespace lightning_indexer {

namespace scale_bits {

constexpr int16_t kHalfAbs = 0x7FFF;
constexpr int16_t kHalfInf = 0x7C00;          // |x| bits >= this: infinite or NaN
constexpr int16_t kHalfPositiveBad = 0x7BFF;  // kHalfInf - 1: the first bad |x| of a negative x
constexpr int32_t kFloatAbs = 0x7FFFFFFF;
constexpr int32_t kHalfOverflow = 0x477FF000;  // float32 65520: the smallest |x| float16 rounds to inf

// A scale's float16 bits fail "finite and >= 0" (-0 passes).
__aicore__ inline bool BadScale(int64_t bits) {
  const int64_t u = bits & 0xFFFF;
  return (u & kHalfAbs) >= kHalfInf || u > 0x8000;
}
// A float32 product's bits fail |x| < 65520 (NaN fails).
__aicore__ inline bool Overflows(int64_t bits) { return (bits & kFloatAbs) >= kHalfOverflow; }

template <AscendC::HardEvent kEvent>
__aicore__ inline void Sync(AscendC::TPipe& pipe) {
  aop_kernel::check::Sync<kEvent>(pipe);
}

// True when some x[0, n) (float16) is not finite and >= 0. a, b: n int16 scratch each; out: 32
// bytes. Per element: d = (|x| bits) - (x negative ? 1 : 0x7C00), bad iff d >= 0.
__aicore__ inline bool AnyBadScale(AscendC::TPipe& pipe, const AscendC::LocalTensor<half>& x,
                                   const AscendC::LocalTensor<int16_t>& a, const AscendC::LocalTensor<int16_t>& b,
                                   const AscendC::LocalTensor<half>& out, int32_t n) {
  using namespace AscendC;  // pipe_t (PIPE_V) is global with CANN, in AscendC in the emulator
  const AscendC::LocalTensor<int16_t> v = x.ReinterpretCast<int16_t>();
  AscendC::Duplicate(b, kHalfAbs, n);
  PipeBarrier<PIPE_V>();
  AscendC::And(a, v, b, n);
  PipeBarrier<PIPE_V>();
  AscendC::Mins(b, v, static_cast<int16_t>(0), n);
  PipeBarrier<PIPE_V>();
  AscendC::Maxs(b, b, static_cast<int16_t>(-1), n);  // -1: sign set, else 0
  PipeBarrier<PIPE_V>();
  AscendC::Muls(b, b, kHalfPositiveBad, n);
  PipeBarrier<PIPE_V>();
  AscendC::Adds(b, b, kHalfInf, n);
  PipeBarrier<PIPE_V>();
  AscendC::Sub(a, a, b, n);
  PipeBarrier<PIPE_V>();
  const AscendC::LocalTensor<half> h = b.ReinterpretCast<half>();
  AscendC::Cast(h, a, AscendC::RoundMode::CAST_NONE, n);  // the sign is kept
  PipeBarrier<PIPE_V>();
  AscendC::ReduceMax(out, h, h, n);
  Sync<AscendC::HardEvent::V_S>(pipe);
  return out.ReinterpretCast<int16_t>().GetValue(0) >= 0;  // max >= +0
}

// True when some |p[0, n)| (float32) is not < 65520. a, b: n int32 scratch each; out: 32 bytes.
__aicore__ inline bool AnyOverflow(AscendC::TPipe& pipe, const AscendC::LocalTensor<float>& p,
                                   const AscendC::LocalTensor<int32_t>& a, const AscendC::LocalTensor<int32_t>& b,
                                   const AscendC::LocalTensor<float>& out, int32_t n) {
  using namespace AscendC;  // pipe_t (PIPE_V) is global with CANN, in AscendC in the emulator
  AscendC::Duplicate(b, kFloatAbs, n);
  PipeBarrier<PIPE_V>();
  // A2's And takes 16-bit elements: the words as int16 pairs (the mask's pattern holds per half).
  AscendC::And(a.ReinterpretCast<int16_t>(), p.ReinterpretCast<int16_t>(), b.ReinterpretCast<int16_t>(), 2 * n);
  PipeBarrier<PIPE_V>();
  AscendC::Adds(a, a, -kHalfOverflow, n);
  PipeBarrier<PIPE_V>();
  const AscendC::LocalTensor<float> f = b.ReinterpretCast<float>();
  AscendC::Cast(f, a, AscendC::RoundMode::CAST_NONE, n);
  PipeBarrier<PIPE_V>();
  AscendC::ReduceMax(out, f, f, n);
  Sync<AscendC::HardEvent::V_S>(pipe);
  return out.ReinterpretCast<int32_t>().GetValue(0) >= 0;
}

}  // namespace scale_bits

// The scale checks' state on one AIV: the first errors of the weights pass (query scales,
// products), held until the check phase, and the key-scale check, run there as DataCheck's extra
// check.
class ScaleCheck {
 public:
  __aicore__ inline void Init(GM_ADDR key_scale, GM_ADDR lengths_q, GM_ADDR lengths_k, GM_ADDR block_table,
                              const LiqTiling& t) {
    t_ = &t;
    ks_.SetGlobalBuffer((__gm__ half*)key_scale, KeyRowsTotal(t));
    table_.SetGlobalBuffer((__gm__ uint8_t*)block_table);
    table_entries_.Init(block_table, t.table_bytes);
    lengths_q_.Init(lengths_q, t.lengths_q);
    lengths_k_.Init(lengths_k, t.lengths_k);
  }

  // The weights pass: rows [r, r + rows) of weights (w) and query_dequant_scale (qs) in UB, n1_pad
  // apart; f1, f2, f3: rows * n1_pad float32 scratch each; out: 32 bytes. Keeps the first error
  // of each kind (a later chunk is not inspected for a kind already found).
  __aicore__ inline void QueryRows(AscendC::TPipe& pipe, const AscendC::LocalTensor<half>& w,
                                   const AscendC::LocalTensor<half>& qs, const AscendC::LocalTensor<float>& f1,
                                   const AscendC::LocalTensor<float>& f2, const AscendC::LocalTensor<float>& f3,
                                   const AscendC::LocalTensor<float>& out, int64_t r, int64_t rows) {
    const LiqTiling& t = *t_;
    const int32_t n = static_cast<int32_t>(rows * t.n1_pad);
    if (qs_[0] == kLiOk &&
        scale_bits::AnyBadScale(pipe, qs, f1.ReinterpretCast<int16_t>(), f2.ReinterpretCast<int16_t>(),
                                out.ReinterpretCast<half>(), n)) {
      const AscendC::LocalTensor<int16_t> bits = qs.ReinterpretCast<int16_t>();
      for (int64_t i = 0; i < rows * t.heads && qs_[0] == kLiOk; ++i) {
        const int64_t row = r + i / t.heads, h = i % t.heads;
        const int64_t v = bits.GetValue(static_cast<uint32_t>((i / t.heads) * t.n1_pad + h));
        if (scale_bits::BadScale(v) && InBatch(row)) QueryRecord(qs_, kLiqQueryScaleInvalid, row, h, v);
      }
    }
    if (wqs_[0] == kLiOk) {
      using namespace AscendC;  // pipe_t (PIPE_V) is global with CANN, in AscendC in the emulator
      scale_bits::Sync<AscendC::HardEvent::S_V>(pipe);  // the scalar reads of out (and the walk's) done
      AscendC::Cast(f1, w, AscendC::RoundMode::CAST_NONE, n);
      AscendC::Cast(f2, qs, AscendC::RoundMode::CAST_NONE, n);
      AscendC::PipeBarrier<PIPE_V>();
      AscendC::Mul(f1, f1, f2, n);  // exact: two float16 significands fit in float32's
      AscendC::PipeBarrier<PIPE_V>();
      if (scale_bits::AnyOverflow(pipe, f1, f2.ReinterpretCast<int32_t>(), f3.ReinterpretCast<int32_t>(), out, n)) {
        const AscendC::LocalTensor<int32_t> p = f1.ReinterpretCast<int32_t>();
        const AscendC::LocalTensor<int16_t> wb = w.ReinterpretCast<int16_t>(), qb = qs.ReinterpretCast<int16_t>();
        for (int64_t i = 0; i < rows * t.heads && wqs_[0] == kLiOk; ++i) {
          const int64_t row = r + i / t.heads, h = i % t.heads;
          const uint32_t at = static_cast<uint32_t>((i / t.heads) * t.n1_pad + h);
          if (scale_bits::Overflows(p.GetValue(at)) && InBatch(row)) {
            QueryRecord(wqs_, kLiqWeightScaleOverflow, row, h, wb.GetValue(at));
            wqs_[6] = (qb.GetValue(at) & 0xFFFF) | kLiHalfTag;
          }
        }
      }
    }
  }

  // DataCheck's extra check (this AIV found no length or block-id error): the first query-scale
  // error of the weights pass, else this AIV's share of the key scales, else the first product
  // error.
  __aicore__ inline void Check(AscendC::TPipe& pipe, const LightningIndexerTiling& /*t*/, int64_t me,
                               int64_t checkers, int64_t* record) {
    if (qs_[0] != kLiOk) return Copy(qs_, record);
    KeyScales(pipe, me, checkers, record);
    if (record[0] == kLiOk && wqs_[0] != kLiOk) Copy(wqs_, record);
  }

 private:
  static constexpr int64_t kKeyChunk = 4096;  // key scales per DMA round and vector test
  static constexpr int32_t kMaxSegments = 32;  // pieces of one round
  static constexpr int64_t kScalarEntries = 16;  // block-table entries a chunk reads by scalar reads
  static constexpr int64_t kTrailingOne = int64_t{1} << 32;  // record word 7: the scale tensor ends in a 1

  __aicore__ inline static int64_t TableBytes() { return RoundUp((kKeyChunk / 16 + 2) * 8, 32); }

  __aicore__ inline void Copy(const int64_t* from, int64_t* to) {
    for (int32_t i = 0; i < aop_kernel::check::kWords; ++i) to[i] = from[i];
  }

  __aicore__ inline void QueryRecord(int64_t* rec, int64_t code, int64_t row, int64_t h, int64_t bits) {
    rec[0] = code;
    rec[1] = row;
    rec[2] = (bits & 0xFFFF) | kLiHalfTag;
    rec[3] = h;
    rec[4] = t_->layout_query;
    rec[5] = t_->q_rows;
  }

  // Whether flat query row `row` belongs to a batch (BSND: below its batch's act_s1; TND: below
  // the last cumulative end). Lengths out of range are an earlier phase's error.
  __aicore__ inline bool InBatch(int64_t row) const {
    const LiqTiling& t = *t_;
    if (!lengths_q_.Present()) return true;
    if (t.layout_query == 1) return row < lengths_q_.Get(t.batch - 1);
    return row % t.q_rows < lengths_q_.Get(row / t.q_rows);
  }

  // Whether batch b has query rows (a batch without any sees no key).
  __aicore__ inline bool HasRows(int64_t b) const {
    const LiqTiling& t = *t_;
    const int64_t q_prev = t.layout_query == 1 && b > 0 ? lengths_q_.Get(b - 1) : 0;
    return (lengths_q_.Present() ? lengths_q_.Get(b) - q_prev : t.q_rows) > 0;
  }

  // Batch b's first key row (BSND / TND; 0 for PA_BSND) and the keys its last row sees if it has
  // rows, within the tensors whatever the lengths say
  // (bad lengths are an earlier phase's error). Batches without rows are checked too, their
  // errors dropped (HasRows): the clean path reads no query length.
  struct Keys {
    int64_t begin, seen;
  };
  __aicore__ inline Keys KeysOf(int64_t b) const {
    const LiqTiling& t = *t_;
    Keys k{0, 0};
    int64_t act_s2 = 0, limit = t.key_rows;
    if (t.layout_key == 1) {
      k.begin = b > 0 ? lengths_k_.Get(b - 1) : 0;
      act_s2 = lengths_k_.Get(b) - k.begin;
      limit = t.key_rows - k.begin;
    } else if (t.layout_key == 0) {
      k.begin = b * t.key_rows;
      act_s2 = lengths_k_.Present() ? lengths_k_.Get(b) : t.key_rows;
    } else {
      act_s2 = lengths_k_.Get(b);
      limit = t.max_blocks * t.block_size;
    }
    if (k.begin < 0 || limit <= 0) return k;
    // A batch's last row sees what the only row of a one-row batch sees (the rule is aligned to
    // the end: act_s2 whatever act_s1).
    k.seen = Max(Min(LiVisibleKeys(t.sparse_mode, 1, act_s2, 0, 1, 0), limit), 0);
    return k;
  }

  // This AIV's share of the key scales to check: the keys batch b's last row sees, for every b,
  // laid end to end (each batch's run padded to 16 keys, so every share starts 32-byte aligned in
  // a run), split evenly over the sharers, in AIV order. The check phase ends with the slowest
  // AIV, so the sharers are the first of these whose shares fit one chunk: when no group has more
  // than one query row (decode; the row is its first AIV's in the weights pass), the second AIV
  // of each group after the first B (AIVs 0 .. B - 1 check the lengths and block ids); every AIV
  // after the first B; every AIV.
  __aicore__ inline void KeyScales(AscendC::TPipe& pipe, int64_t me, int64_t checkers, int64_t* record) {
    const LiqTiling& t = *t_;
    int64_t total = 0;
    for (int64_t b = 0; b < t.batch; ++b) total += RoundUp(KeysOf(b).seen, 16);
    const int64_t first = t.batch < checkers ? t.batch : 0;
    int64_t s0 = 0, step = 1;  // sharers: s0, s0 + step, ... < checkers
    if (t.wq_group_rows <= 1 && first > 0 && total <= (checkers - first) / 2 * kKeyChunk) {
      s0 = first | 1;
      step = 2;
    } else if (first > 0 && total <= (checkers - first) * kKeyChunk) {
      s0 = first;
    }
    if (me < s0 || (me - s0) % step != 0) return;
    const int64_t sharers = (checkers - s0 + step - 1) / step, k = (me - s0) / step;
    const int64_t lo = RoundUp(total * k / sharers, 16), hi = RoundUp(total * (k + 1) / sharers, 16);
    if (lo >= hi) return;
    pipe.InitBuffer(x_buf_, kKeyChunk * 2);
    pipe.InitBuffer(a_buf_, kKeyChunk * 2);
    pipe.InitBuffer(b_buf_, kKeyChunk * 2);
    pipe.InitBuffer(out_buf_, 32);
    pipe.InitBuffer(table_buf_, static_cast<uint32_t>(TableBytes()));
    // The weights pass's last copy out and vector and scalar reads used this UB.
    scale_bits::Sync<AscendC::HardEvent::MTE3_MTE2>(pipe);
    scale_bits::Sync<AscendC::HardEvent::MTE3_V>(pipe);
    scale_bits::Sync<AscendC::HardEvent::V_MTE2>(pipe);
    scale_bits::Sync<AscendC::HardEvent::S_MTE2>(pipe);
    int64_t at = 0;
    for (int64_t b = 0; b < t.batch && at < hi; ++b) {
      const Keys k = KeysOf(b);
      const int64_t j1 = Min(hi - at, k.seen);
      for (int64_t j = Max(lo - at, 0); j < j1;) {  // pieces that fill the round's buffer
        if (fill_ == kKeyChunk || segments_ == kMaxSegments) {
          if (!Flush(pipe, record)) return;
        }
        const int64_t n = Min(j1 - j, kKeyChunk - fill_);
        if (!Stage(pipe, b, k.begin, j, n)) return;
        j += n;
      }
      at += RoundUp(k.seen, 16);
    }
    Flush(pipe, record);
  }

  // One round: the key scales of up to kMaxSegments pieces (runs of consecutive keys of one
  // batch) copied into one buffer, each at a 16-key boundary (the gaps padded with zeros, a valid
  // scale), their copies in flight together, then one vector test.
  struct Segment {
    int64_t batch, k_begin, j, n, at;  // keys [j, j + n) of `batch` at x[at]
  };

  // Issues the copies of keys [j, j + n) of batch b (j a multiple of 16) into the round's buffer;
  // false when a block id is out of range (the block-id phase's error: stop).
  __aicore__ inline bool Stage(AscendC::TPipe& pipe, int64_t b, int64_t k_begin, int64_t j, int64_t n) {
    const LiqTiling& t = *t_;
    if (fill_ == 0 && used_) {  // this round overwrites what the last one's copies wrote and its readers read
      scale_bits::Sync<AscendC::HardEvent::V_MTE2>(pipe);
      scale_bits::Sync<AscendC::HardEvent::S_MTE2>(pipe);
      scale_bits::Sync<AscendC::HardEvent::S_V>(pipe);
    }
    used_ = true;
    const AscendC::LocalTensor<half> x = x_buf_.Get<half>()[static_cast<uint32_t>(fill_)];
    const int64_t je = j + n;
    const uint8_t tail = static_cast<uint8_t>(RoundUp(n, 16) - n);  // zeros up to the next 16 keys
    if (t.layout_key != 2) {
      const AscendC::DataCopyExtParams run{1, static_cast<uint32_t>(n * 2), 0, 0, 0};
      const AscendC::DataCopyPadExtParams<half> pad{tail > 0, 0, tail, static_cast<half>(0)};
      AscendC::DataCopyPad(x, ks_[k_begin + j], run, pad);
    } else {
      // The piece's block-table entries: a few by scalar reads (one data-cache line holds 8 or
      // 16), else staged in UB by one DMA.
      const int64_t num_blocks = t.key_rows / t.block_size, first_block = j / t.block_size;
      const int64_t count = (je - 1) / t.block_size - first_block + 1, entry0 = b * t.max_blocks + first_block;
      const AscendC::LocalTensor<uint8_t> table = table_buf_.Get<uint8_t>();
      const bool staged = count > kScalarEntries;
      if (staged) {
        if (table_read_) scale_bits::Sync<AscendC::HardEvent::S_MTE2>(pipe);  // the last staged entries were read
        const AscendC::DataCopyExtParams p{1, static_cast<uint32_t>(count * t.table_bytes), 0, 0, 0};
        const AscendC::DataCopyPadExtParams<uint8_t> none{false, 0, 0, 0};
        AscendC::DataCopyPad(table, table_[entry0 * t.table_bytes], p, none);
        scale_bits::Sync<AscendC::HardEvent::MTE2_S>(pipe);
        table_read_ = true;
      }
      for (int64_t jj = j; jj < je;) {  // a run per cache block
        const int64_t in_block = jj % t.block_size, len = Min(t.block_size - in_block, je - jj);
        const int64_t i = jj / t.block_size - first_block;
        const int64_t id = staged ? TableEntry(table, i) : table_entries_.Get(entry0 + i);
        if (id < 0 || id >= num_blocks) return false;
        const uint8_t run_tail = jj + len == je ? tail : 0;
        const AscendC::DataCopyExtParams run{1, static_cast<uint32_t>(len * 2), 0, 0, 0};
        const AscendC::DataCopyPadExtParams<half> pad{run_tail > 0, 0, run_tail, static_cast<half>(0)};
        AscendC::DataCopyPad(x[static_cast<uint32_t>(jj - j)], ks_[id * t.block_size + in_block], run, pad);
        jj += len;
      }
    }
    segments_list_[segments_++] = {b, k_begin, j, n, fill_};
    fill_ += RoundUp(n, 16);
    return true;
  }

  // Tests the round's buffer; on a fired test, the first bad scale of a batch with rows into
  // `record` (false). Empties the round.
  __aicore__ inline bool Flush(AscendC::TPipe& pipe, int64_t* record) {
    const LiqTiling& t = *t_;
    if (fill_ == 0) return true;
    const AscendC::LocalTensor<half> x = x_buf_.Get<half>();
    scale_bits::Sync<AscendC::HardEvent::MTE2_V>(pipe);
    const bool fired = scale_bits::AnyBadScale(pipe, x, a_buf_.Get<int16_t>(), b_buf_.Get<int16_t>(),
                                               out_buf_.Get<half>(), static_cast<int32_t>(fill_));
    const int32_t segments = segments_;
    fill_ = 0;
    segments_ = 0;
    if (!fired) return true;
    scale_bits::Sync<AscendC::HardEvent::MTE2_S>(pipe);
    const AscendC::LocalTensor<int16_t> bits = x.ReinterpretCast<int16_t>();
    for (int32_t s = 0; s < segments; ++s) {
      const Segment& g = segments_list_[s];
      if (!HasRows(g.batch)) continue;
      for (int64_t i = 0; i < g.n; ++i) {
        const int64_t v = bits.GetValue(static_cast<uint32_t>(g.at + i));
        if (!scale_bits::BadScale(v)) continue;
        const int64_t j = g.j + i;
        const int64_t row = t.layout_key == 2
                                ? table_entries_.Get(g.batch * t.max_blocks + j / t.block_size) * t.block_size +
                                      j % t.block_size
                                : g.k_begin + j;
        record[0] = kLiqKeyScaleInvalid;
        record[1] = g.batch;
        record[2] = (v & 0xFFFF) | kLiHalfTag;
        record[3] = j;
        record[4] = row;  // N2 = 1: the flat element
        record[5] = t.layout_key;
        record[6] = t.layout_key == 2 ? t.block_size : (t.layout_key == 0 ? t.key_rows : 0);
        record[7] = 1 | (t.ks_trailing_one ? kTrailingOne : 0);
        return false;
      }
    }
    return true;
  }

  __aicore__ inline int64_t TableEntry(const AscendC::LocalTensor<uint8_t>& table, int64_t i) const {
    const uint32_t at = static_cast<uint32_t>(i);
    return t_->table_bytes == 8 ? table.ReinterpretCast<int64_t>().GetValue(at)
                                : static_cast<int64_t>(table.ReinterpretCast<int32_t>().GetValue(at));
  }

  const LiqTiling* t_ = nullptr;
  AscendC::GlobalTensor<half> ks_;
  AscendC::GlobalTensor<uint8_t> table_;
  IndexTensor lengths_q_, lengths_k_, table_entries_;
  bool used_ = false;        // a round was staged
  bool table_read_ = false;  // staged block-table entries were read
  int64_t fill_ = 0;         // keys (16-key aligned) in the round's buffer
  int32_t segments_ = 0;
  Segment segments_list_[kMaxSegments];
  AscendC::TBuf<AscendC::TPosition::VECCALC> x_buf_, a_buf_, b_buf_, out_buf_, table_buf_;
  int64_t qs_[aop_kernel::check::kWords] = {kLiOk, 0, 0, 0, 0, 0, 0, 0};
  int64_t wqs_[aop_kernel::check::kWords] = {kLiOk, 0, 0, 0, 0, 0, 0, 0};
};

}  // namespace lightning_indexer
