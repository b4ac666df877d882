// The check phase of sparse_flash_attention over common's check slots (aop_kernel/check_slots.h):
// what the AIVs check, which error comes first, and the AIC's side of the verdict.
// The batches are split evenly over the launch's 2 * block_dim AIVs; each checks its batches'
// query lengths, then their kv lengths, then the block ids they read (PA_BSND: the table entries
// [0, ceil(act_kv / block_size)) ), then the first n entries of each of their rows' indices
// (an entry < -1 before the first -1), and publishes its first error. SyncAll<true> (the AIVs);
// every AIV reads every verdict code by one DMA; the first error is the one of the earliest phase, then
// the lowest core (= lowest batch); AIV 0 copies it into the error record; AIV 0 of each group
// writes the group's verdict line and both AIVs set kVerdictReady for their AIC.
#pragma once
#include "kernel_operator.h"
#include "aop_kernel/check_slots.h"

#include "kernel/sparse_flash_attention_handshake.h"
#include "kernel/sparse_flash_attention_rows.h"

namespace sparse_flash_attention {

namespace check = aop_kernel::check;

class DataCheck {
 public:
  // AIV: true when no AIV found an error. AIC: waits for its group's verdict (check::AicVerdict).
  __aicore__ inline bool Run(GM_ADDR lengths_q, GM_ADDR lengths_kv, GM_ADDR block_table, GM_ADDR sparse_indices,
                             GM_ADDR workspace, GM_ADDR error_record, const SparseFlashAttentionTiling& t) {
    const int64_t checkers = 2 * static_cast<int64_t>(t.block_dim);  // MIX 1:2
    if ASCEND_IS_AIC {
      return check::AicVerdict<kVerdictReady>(workspace, checkers);
    }
    bool ok = true;
    if ASCEND_IS_AIV {
      // The check's own UB (table / index chunks, then every slot), released before the op's
      // pipes are built: scalar GM reads cost a data-cache miss each.
      AscendC::TPipe pipe;
      pipe_ = &pipe;
      const int64_t verdict_at = checkers * check::kWords;  // int64 words: after the slots' copy
      // index chunks, one word staging a row's E (splits > 1), the chunk as float32, the
      // ReduceMin scratch and result (FastFloats); later every slot
      pipe.InitBuffer(buf_, static_cast<uint32_t>(Max(static_cast<int64_t>(t.index_chunk) * 4 + kStageBytes +
                                                          FastFloats(t.index_chunk) * 4,
                                                      (verdict_at + check::kWords) * 8)));
      if (t.splits > 1) entries_.SetGlobalBuffer((__gm__ int32_t*)(workspace + t.entries_offset));
      stage_at_ = t.index_chunk;  // int32 words: after the index chunk (32-byte aligned: a multiple of 8)
      fast_at_ = t.index_chunk + kStageBytes / 4;
      index_chunk_ = t.index_chunk;
      const int64_t me = AscendC::GetBlockIdx();
      const int64_t per = t.batch / checkers, extra = t.batch % checkers;
      const int64_t b0 = me * per + Min(me, extra);
      const int64_t b1 = b0 + per + (me < extra ? 1 : 0);
      int64_t record[check::kWords] = {kSfaOk, 0, 0, 0, 0, 0, 0, 0};
      lengths_q_.Init(lengths_q);
      lengths_kv_.Init(lengths_kv);
      table_.SetGlobalBuffer((__gm__ int32_t*)block_table);
      indices_.SetGlobalBuffer((__gm__ int32_t*)sparse_indices);
      const bool tnd_q = t.layout_query == 1, tnd_kv = t.layout_kv == 1;
      if (t.has_lengths_q) Lengths(lengths_q_, b0, b1, tnd_q, t.q_rows, t.layout_query, kSfaLenQNegative, record);
      if (record[0] == kSfaOk && t.has_lengths_kv) {
        const int64_t limit = t.layout_kv == 2 ? t.max_blocks * t.block_size : t.key_rows;
        Lengths(lengths_kv_, b0, b1, tnd_kv, limit, t.layout_kv, kSfaLenKvNegative, record);
      }
      if (record[0] == kSfaOk && t.layout_kv == 2) BlockIds(t, b0, b1, record);
      if (record[0] == kSfaOk) Indices(t, b0, b1, record);
      if (loaded_) check::Sync<AscendC::HardEvent::S_MTE2>(pipe);  // the last chunk's scalar reads
      if (vector_read_) check::Sync<AscendC::HardEvent::V_MTE2>(pipe);  // and its vector reads
      ok = check::MixVerdict<Phases, kVerdictReady>(pipe, workspace, error_record, checkers, record,
                                                    buf_.Get<int64_t>());
      pipe.Destroy();  // its UB goes back to the op's pipes
    }
    return ok;
  }

 private:
  // The order of the checks: query lengths, kv lengths, block ids, indices (MixVerdict reports
  // the earliest phase's error).
  struct Phases {
    __aicore__ inline static int64_t Of(int64_t code) {
      return code <= kSfaLenQBeyond ? 0 : code <= kSfaLenKvBeyond ? 1 : code == kSfaBlockIdOutOfRange ? 2 : 3;
    }
  };

  // codes: negative, below the previous end (code + 1), beyond the limit (code + 2).
  __aicore__ inline void Lengths(const Int32Gm& lengths, int64_t b0, int64_t b1, bool cumulative, int64_t limit,
                                 int64_t layout, int64_t code, int64_t* record) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t v = lengths.Get(b);
      const int64_t previous = cumulative && b > 0 ? lengths.Get(b - 1) : 0;
      if (v < 0) return Fail(record, code, b, v, 0, layout);
      if (cumulative && v < previous) return Fail(record, code + 1, b, v, previous, layout);
      if (v > limit) return Fail(record, code + 2, b, v, limit, layout);
    }
  }

  // act_kv of batch b with its lengths checked (by this core); false when a neighbour's
  // cumulative end is itself out of range (that core reports an earlier-phase error).
  __aicore__ inline bool KvLength(const SparseFlashAttentionTiling& t, int64_t b, int64_t& act_kv) const {
    if (t.layout_kv == 1) {
      const int64_t start = b > 0 ? lengths_kv_.Get(b - 1) : 0;
      act_kv = lengths_kv_.Get(b) - start;
      return start >= 0 && act_kv >= 0;
    }
    act_kv = t.has_lengths_kv ? lengths_kv_.Get(b) : t.key_rows;
    return true;
  }

  // PA_BSND: the ids of the blocks batch b reads lie in [0, num_blocks).
  __aicore__ inline void BlockIds(const SparseFlashAttentionTiling& t, int64_t b0, int64_t b1, int64_t* record) {
    for (int64_t b = b0; b < b1; ++b) {
      int64_t len = 0;
      KvLength(t, b, len);
      const int64_t used = Min(CeilDiv(Max(len, 0), t.block_size), t.max_blocks);
      for (int64_t i = 0; i < used; i += t.index_chunk) {
        const int64_t count = Min(used - i, t.index_chunk);
        const AscendC::LocalTensor<int32_t> ub = Load(table_, b * t.max_blocks + i, count);
        for (int64_t j = 0; j < count; ++j) {
          const int64_t id = static_cast<int64_t>(ub.GetValue(static_cast<uint32_t>(j)));
          if (id < 0 || id >= t.num_blocks) {
            Fail(record, kSfaBlockIdOutOfRange, b, id, i + j, t.num_blocks);
            record[5] = len;
            record[6] = t.block_size;
            return;
          }
        }
      }
    }
  }

  // The first n entries of each row of batches [b0, b1): none below -1 before the first -1.
  __aicore__ inline void Indices(const SparseFlashAttentionTiling& t, int64_t b0, int64_t b1, int64_t* record) {
    for (int64_t b = b0; b < b1; ++b) {
      int64_t act_kv = 0, q_begin = 0, act_q = t.q_rows;
      if (!KvLength(t, b, act_kv)) continue;
      if (t.layout_query == 1) {
        q_begin = b > 0 ? lengths_q_.Get(b - 1) : 0;
        act_q = lengths_q_.Get(b) - q_begin;
        if (q_begin < 0 || act_q < 0) continue;  // a neighbour's length error comes first
      } else {
        q_begin = b * t.q_rows;
        if (t.has_lengths_q) act_q = lengths_q_.Get(b);
      }
      for (int64_t r = 0; r < act_q; ++r) {
        const int64_t thr = t.sparse_mode == 0 ? act_kv : act_kv - act_q + r + 1;
        const int64_t n = thr > 0 ? Min(t.topk, CeilDiv(thr, t.sparse_block_size)) : 0;
        const int64_t row = q_begin + r;
        int64_t entries = n;  // E: the entries before the first -1
        for (int64_t i = 0; i < n && entries == n; i += t.index_chunk) {
          const int64_t count = Min(n - i, t.index_chunk);
          const AscendC::LocalTensor<int32_t> ub = Load(indices_, row * t.topk + i, count);
          if (AllNonNegative(count)) continue;  // no -1 and nothing below: no scalar walk
          for (int64_t j = 0; j < count; ++j) {
            const int64_t v = static_cast<int64_t>(ub.GetValue(static_cast<uint32_t>(j)));
            if (v == -1) {
              entries = i + j;
              break;
            }
            if (v < -1) {
              Fail(record, kSfaIndexBelowMinusOne, row, v, i + j, b);
              record[5] = n;
              return;
            }
          }
        }
        if (t.splits > 1 && n > 0) WriteEntries(row, entries);
      }
    }
  }

  // Whether the count entries just loaded are all >= 0 (the common case: no -1, no error): the
  // chunk as float32 (the sign survives the rounding) and one ReduceMin on the vector unit,
  // instead of a scalar walk of one cycle per entry.
  __aicore__ inline bool AllNonNegative(int64_t count) {
    const AscendC::LocalTensor<int32_t> ub = buf_.Get<int32_t>();
    const AscendC::LocalTensor<float> f = buf_.Get<float>()[static_cast<uint32_t>(fast_at_)];
    const AscendC::LocalTensor<float> work = f[static_cast<uint32_t>(index_chunk_)];
    const AscendC::LocalTensor<float> least = work[static_cast<uint32_t>(RoundUp(index_chunk_, 64) + 64)];
    check::Sync<AscendC::HardEvent::MTE2_V>(*pipe_);
    if (vector_read_) check::Sync<AscendC::HardEvent::S_V>(*pipe_);  // the last chunk's minimum was read
    AscendC::Cast(f, ub, AscendC::RoundMode::CAST_NONE, static_cast<uint32_t>(count));
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::ReduceMin(least, f, work, static_cast<int32_t>(count));
    check::Sync<AscendC::HardEvent::V_S>(*pipe_);
    vector_read_ = true;
    return least.GetValue(0) >= 0.0f;
  }

  // Floats after the staging word: the chunk as float32, ReduceMin's scratch, its result.
  __aicore__ inline static int64_t FastFloats(int64_t index_chunk) {
    return index_chunk + RoundUp(index_chunk, 64) + 64 + 8;
  }

  // E of a row into the workspace (read by the cores after the verdict: splits > 1).
  __aicore__ inline void WriteEntries(int64_t row, int64_t entries) {
    const AscendC::LocalTensor<int32_t> stage = buf_.Get<int32_t>()[static_cast<uint32_t>(stage_at_)];
    if (staged_) check::Sync<AscendC::HardEvent::MTE3_S>(*pipe_);  // the last word was copied out
    stage.SetValue(0, static_cast<int32_t>(entries));
    check::Sync<AscendC::HardEvent::S_MTE3>(*pipe_);
    AscendC::DataCopyExtParams params{1, 4, 0, 0, 0};
    AscendC::DataCopyPad(entries_[static_cast<uint64_t>(row)], stage, params);
    staged_ = true;
  }

  __aicore__ inline void Fail(int64_t* record, int64_t code, int64_t index, int64_t value, int64_t aux, int64_t c4) {
    record[0] = code;
    record[1] = index;
    record[2] = value;
    record[3] = aux;
    record[4] = c4;
  }

  // Entries [first, first + count) of an int32 tensor into the check's UB.
  __aicore__ inline AscendC::LocalTensor<int32_t> Load(const GlobalTensor<int32_t>& src, int64_t first,
                                                      int64_t count) {
    const AscendC::LocalTensor<int32_t> ub = buf_.Get<int32_t>();
    if (loaded_) check::Sync<AscendC::HardEvent::S_MTE2>(*pipe_);  // the previous entries were read
    if (vector_read_) check::Sync<AscendC::HardEvent::V_MTE2>(*pipe_);  // also by the vector unit
    AscendC::DataCopyExtParams params{1, static_cast<uint32_t>(count * 4), 0, 0, 0};
    AscendC::DataCopyPadExtParams<int32_t> pad{false, 0, 0, 0};
    AscendC::DataCopyPad(ub, src[static_cast<uint64_t>(first)], params, pad);
    check::Sync<AscendC::HardEvent::MTE2_S>(*pipe_);
    loaded_ = true;
    return ub;
  }

  static constexpr int64_t kStageBytes = 32;
  Int32Gm lengths_q_, lengths_kv_;
  GlobalTensor<int32_t> table_, indices_, entries_;
  int64_t stage_at_ = 0;
  int64_t fast_at_ = 0;      // float words: the fast path's buffers (after the staging word)
  int64_t index_chunk_ = 0;
  bool vector_read_ = false;  // the fast path has read a chunk (V_MTE2 before the next load)
  bool staged_ = false;
  AscendC::TBuf<AscendC::TPosition::VECCALC> buf_;
  AscendC::TPipe* pipe_ = nullptr;
  bool loaded_ = false;
};

}  // namespace sparse_flash_attention
