// The check phase of lightning_indexer over common's check slots (aop_kernel/check_slots.h): what
// the AIVs check, which error comes first, and the AIC's side of the verdict.
#pragma once
#include "kernel_operator.h"
#include "aop_kernel/check_slots.h"

#include "kernel/lightning_indexer_handshake.h"
#include "kernel/lightning_indexer_work.h"

namespace lightning_indexer {

namespace check = aop_kernel::check;

// The check phase of lightning_indexer (the host's check_data, in its order): the batches are split
// evenly over the launch's 2 * block_dim AIVs; each AIV checks its batches' query lengths, then
// their key lengths, then the block ids they use, then their cmp_residual_k entries (in
// [0, cmp_ratio): the shared rule, lightning_indexer_visibility.h), and publishes its first error
// (or none). Then
// SyncAll<true> (the AIVs): every AIV reads every verdict code by one DMA; AIV 0 of each group writes the
// verdict into the group's verdict line (after the 2 * block_dim slots) and both AIVs set
// kVerdictReady (mode 2). The AIC does not wait here: it starts its first key block meanwhile and
// learns the verdict (CubeVerdict) before it publishes a block to the AIVs.
// An op may add checks of its own after these (Run's `extra`: lightning_indexer_quant's scales,
// kernel/liq_scale_check.h): Extra::Check(pipe, tiling, checker, checkers, record) runs when this
// AIV found nothing, on UB it allocates from `pipe` after the check's own, before the verdict.
struct NoExtraCheck {
  __aicore__ inline void Check(AscendC::TPipe&, const LightningIndexerTiling&, int64_t, int64_t, int64_t*) {}
};

class DataCheck {
 public:
  // AIV: true when no AIV found an error; AIV 0 records the first one. AIC: true (CubeVerdict).
  __aicore__ inline bool Run(GM_ADDR lengths_q, GM_ADDR lengths_k, GM_ADDR block_table, GM_ADDR residual,
                             GM_ADDR workspace, GM_ADDR error_record, const LightningIndexerTiling& t) {
    NoExtraCheck none;
    return Run(lengths_q, lengths_k, block_table, residual, workspace, error_record, t, none);
  }
  template <class Extra>
  __aicore__ inline bool Run(GM_ADDR lengths_q, GM_ADDR lengths_k, GM_ADDR block_table, GM_ADDR residual,
                             GM_ADDR workspace, GM_ADDR error_record, const LightningIndexerTiling& t,
                             Extra& extra) {
    const int64_t checkers = 2 * static_cast<int64_t>(t.block_dim);  // MIX 1:2
    bool ok = true;
    if ASCEND_IS_AIV {
      // The check's own UB (block-table entries, then every slot), released before the op's
      // pipes are built: scalar GM reads cost a data-cache miss each.
      AscendC::TPipe pipe;
      pipe.InitBuffer(buf_, static_cast<uint32_t>(UbBytes(checkers)));
      pipe_ = &pipe;
      const int64_t me = AscendC::GetBlockIdx();
      const int64_t per = t.batch / checkers, rest = t.batch % checkers;
      const int64_t b0 = me * per + Min(me, rest);
      const int64_t b1 = b0 + per + (me < rest ? 1 : 0);
      int64_t record[check::kWords] = {kLiOk, 0, 0, 0, 0, 0, 0, 0};
      lengths_q_.Init(lengths_q, t.lengths_q);
      lengths_k_.Init(lengths_k, t.lengths_k);
      residual_.Init(residual, t.residual_bytes);
      table_.SetGlobalBuffer((__gm__ uint8_t*)block_table);
      if (lengths_q_.Present()) {
        Lengths(lengths_q_, b0, b1, t.layout_query == 1, t.q_rows, t.layout_query, kLiLenQNegative, record);
      }
      if (record[0] == kLiOk && lengths_k_.Present()) {
        const int64_t limit = t.layout_key == 2 ? t.max_blocks * t.block_size : t.key_rows;
        Lengths(lengths_k_, b0, b1, t.layout_key == 1, limit, t.layout_key, kLiLenKNegative, record);
      }
      if (record[0] == kLiOk && t.layout_key == 2) BlockIds(t, b0, b1, record);
      if (record[0] == kLiOk && residual_.Present()) Residuals(t, b0, b1, record);
      if (record[0] == kLiOk) extra.Check(pipe, t, me, checkers, record);
      if (loaded_) check::Sync<AscendC::HardEvent::S_MTE2>(pipe);  // the table's last scalar reads
      ok = check::MixVerdict<Phases, kVerdictReady>(pipe, workspace, error_record, checkers, record,
                                                    buf_.Get<int64_t>());
      pipe.Destroy();  // its UB goes back to the op's pipes
    }
    return ok;
  }

  // The UB the check phase uses (from the start of the UB): block-table entries, then every slot
  // and the verdict line (int64 words).
  __aicore__ inline static int64_t UbBytes(int64_t checkers) {
    return Max(kTableChunk * 8, (checkers * check::kWords + check::kWords) * 8);
  }

 private:
  // The order of the checks: query lengths, key lengths, block ids, residuals, then the quant
  // op's query scales, key scales, weights x query scales (MixVerdict reports the earliest
  // phase's error).
  struct Phases {
    __aicore__ inline static int64_t Of(int64_t code) {
      if (code == kLiResidualOutOfRange) return 3;
      if (code >= kLiqQueryScaleInvalid) return 4 + (code - kLiqQueryScaleInvalid);
      return (code - kLiLenQNegative) / 3;
    }
  };

  // codes: negative, below the previous end (code + 1), beyond the limit (code + 2).
  __aicore__ inline void Lengths(const IndexTensor& lengths, int64_t b0, int64_t b1, bool cumulative, int64_t limit,
                                 int64_t layout, int64_t code, int64_t* record) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t v = lengths.Get(b);
      const int64_t previous = b > 0 ? lengths.Get(b - 1) : 0;
      if (v < 0) return Fail(record, code, b, v, 0, layout);
      if (cumulative && v < previous) return Fail(record, code + 1, b, v, previous, layout);
      if (v > limit) return Fail(record, code + 2, b, v, limit, layout);
    }
  }

  // PA_BSND: the ids of the blocks batch b's keys use lie in [0, num_blocks). A key length out of
  // range is an earlier phase's error: the table is then read only within its row.
  __aicore__ inline void BlockIds(const LightningIndexerTiling& t, int64_t b0, int64_t b1, int64_t* record) {
    const int64_t num_blocks = t.key_rows / t.block_size;
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t len = lengths_k_.Get(b);
      const int64_t used = Min(Max((len + t.block_size - 1) / t.block_size, 0), t.max_blocks);
      for (int64_t i = 0; i < used; ++i) {
        if (i % kTableChunk == 0) LoadTable(t, b * t.max_blocks + i, Min(used - i, kTableChunk));
        const AscendC::LocalTensor<uint8_t> ub = buf_.Get<uint8_t>();
        const uint32_t at = static_cast<uint32_t>(i % kTableChunk);
        const int64_t id = t.table_bytes == 8 ? ub.ReinterpretCast<int64_t>().GetValue(at)
                                              : static_cast<int64_t>(ub.ReinterpretCast<int32_t>().GetValue(at));
        if (id < 0 || id >= num_blocks) {
          Fail(record, kLiBlockIdOutOfRange, b, id, i, num_blocks);
          record[5] = len;
          record[6] = t.block_size;
          return;
        }
      }
    }
  }

  // cmp_residual_k[b] in [0, cmp_ratio) for batches [b0, b1).
  __aicore__ inline void Residuals(const LightningIndexerTiling& t, int64_t b0, int64_t b1, int64_t* record) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t v = residual_.Get(b);
      if (!LiResidualValid(v, t.cmp_ratio)) return Fail(record, kLiResidualOutOfRange, b, v, t.cmp_ratio, 0);
    }
  }

  __aicore__ inline void Fail(int64_t* record, int64_t code, int64_t b, int64_t value, int64_t aux, int64_t c4) {
    record[0] = code;
    record[1] = b;
    record[2] = value;
    record[3] = aux;
    record[4] = c4;
  }

  // Entries [first, first + count) of the block table into UB.
  __aicore__ inline void LoadTable(const LightningIndexerTiling& t, int64_t first, int64_t count) {
    if (loaded_) check::Sync<AscendC::HardEvent::S_MTE2>(*pipe_);  // the previous entries were read
    AscendC::DataCopyExtParams params{1, static_cast<uint32_t>(count * t.table_bytes), 0, 0, 0};
    AscendC::DataCopyPadExtParams<uint8_t> pad{false, 0, 0, 0};
    AscendC::DataCopyPad(buf_.Get<uint8_t>(), table_[first * t.table_bytes], params, pad);
    check::Sync<AscendC::HardEvent::MTE2_S>(*pipe_);
    loaded_ = true;
  }

  static constexpr int64_t kTableChunk = 2048;  // block-table entries per DMA
  IndexTensor lengths_q_, lengths_k_, residual_;
  AscendC::GlobalTensor<uint8_t> table_;
  AscendC::TBuf<AscendC::TPosition::VECCALC> buf_;
  AscendC::TPipe* pipe_ = nullptr;
  bool loaded_ = false;
};

// The AIC's side of the check phase. The AIC does not wait for the verdict before it reads keys:
// while the AIVs check, it computes its first key block (reading only inside the tensors: Cube
// checks every row and block id it reads against the tensor, whatever the lengths say) and waits
// for the verdict only before it publishes that block. On an error it publishes nothing: the AIVs
// never read a score and no output is written. With valid inputs those range checks never fire.
// The AIC has no UB: one scalar read (a data-cache miss) of the group's verdict line.
class CubeVerdict {
 public:
  __aicore__ inline void Init(GM_ADDR workspace, int64_t block_dim) {
    workspace_ = workspace;
    checkers_ = 2 * block_dim;  // MIX 1:2
  }
  // Waits for the verdict the first time (every AIC consumes its group's kVerdictReady once).
  __aicore__ inline bool Ok() {
    if (!known_) {
      ok_ = check::AicVerdict<kVerdictReady>(workspace_, checkers_);
      known_ = true;
    }
    return ok_;
  }
  // Whether Ok() has waited already (then it returns at once).
  __aicore__ inline bool Known() const { return known_; }

 private:
  GM_ADDR workspace_ = nullptr;
  int64_t checkers_ = 0;
  bool known_ = false;
  bool ok_ = false;
};

}  // namespace lightning_indexer
