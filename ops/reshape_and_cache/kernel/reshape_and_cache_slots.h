// The slots and the all-or-nothing check of reshape_and_cache's kernels (the bit copy and the
// int8 write): a core's share of slot_mapping comes into UB by one DMA per kRacSlotChunk and serves
// both the check and the write; the check publishes this core's verdict (aop_kernel/check_slots.h)
// and, after SyncAll, no core writes if any core found an error; core 0 records the first one.
#pragma once
#include "kernel_operator.h"
#include "aop_kernel/check_slots.h"
#include "aop_kernel/core_share.h"
#include "kernel/reshape_and_cache_tiling.h"

template <typename S>
class RacSlots {
 public:
  __aicore__ inline void Init(AscendC::TPipe& pipe, GM_ADDR slot_mapping, const ReshapeAndCacheTiling& tiling) {
    pipe_ = &pipe;
    tiling_ = &tiling;
    // the core's token group: cores c of one group (c / chan_groups) share its tokens
    tokens_ = aop_kernel::ShareOf(AscendC::GetBlockIdx() / tiling.chan_groups, tiling.tokens_per_core,
                                  tiling.cores_with_extra);
    slots_.SetGlobalBuffer((__gm__ S*)slot_mapping, tiling.num_tokens);
    pipe.InitBuffer(check_buf_, aop_kernel::check::UbBytes(tiling.block_dim));
    pipe.InitBuffer(slot_buf_, static_cast<uint32_t>(kRacSlotChunk * sizeof(S)));
    slot_chunk_ = slot_buf_.template Get<S>();
  }

  // The check phase: true when no core found an error. `record` is this core's verdict so far
  // (the int8 write's scale check on core 0 comes first); the slots are checked after it.
  __aicore__ inline bool Check(GM_ADDR workspace, GM_ADDR error_record, int64_t* record) {
    const int64_t core = AscendC::GetBlockIdx();
    for (int64_t t = tokens_.begin; record[0] == kRacOk && t < tokens_.end; ++t) {
      const int64_t slot = Slot(t);
      if (slot >= tiling_->num_slots) {  // the first bad slot of this core's tokens
        record[0] = kRacSlotOutOfRange;
        record[1] = t;
        record[2] = slot;
        record[4] = tiling_->num_blocks;
        record[5] = tiling_->block_size;
      }
    }
    const AscendC::LocalTensor<int64_t> slots_ub = check_buf_.template Get<int64_t>();
    const int64_t bad = aop_kernel::check::Exchange(*pipe_, workspace, core, tiling_->block_dim, record, slots_ub);
    if (bad < 0) return true;
    if (core == 0) {
      const int64_t first = FirstScaleError(workspace, bad);
      if (first != bad) aop_kernel::check::LoadSlot(*pipe_, workspace, first, slots_ub);
      aop_kernel::check::Record(error_record, slots_ub, first);
    }
    return false;
  }

  // slot_mapping[t] for one of this core's tokens, from the chunk of slots in UB (loaded by one
  // DMA when t is outside it): one scalar GM read per token would cost a data-cache miss each.
  __aicore__ inline int64_t Slot(int64_t t) {
    if (t < chunk_begin_ || t >= chunk_end_) LoadSlots(t);
    return static_cast<int64_t>(slot_chunk_.GetValue(static_cast<uint32_t>(t - chunk_begin_)));
  }

  __aicore__ inline const aop_kernel::CoreShare& Tokens() const { return tokens_; }

 private:
  // The core whose error comes first in the host's order, given `bad`, the lowest core with one.
  // The host checks the scale / offset tables in turn, each in index order, before any slot. A
  // sliced launch checks a per-channel table in slices on the cores of token group 0, [0,
  // chan_groups), each stopping at its first error: the first is then the bad scale of the lowest
  // (table, index) among them, if any. Scalar reads of their slots: on an error only.
  __aicore__ inline int64_t FirstScaleError(GM_ADDR workspace, int64_t bad) {
    // one core, or the lowest error outside group 0: no scale error on any core
    if (tiling_->sliced == 0 || tiling_->block_dim == 1 || bad >= tiling_->chan_groups) return bad;
    int64_t first = -1, which = 0, index = 0;
    for (int64_t c = bad; c < tiling_->chan_groups; ++c) {
      if (aop_kernel::check::SlotCode(workspace, c) != kRacBadScale) continue;
      const AscendC::GlobalTensor<int64_t> slot = aop_kernel::check::Words(workspace, c);
      const int64_t w = slot.GetValue(3), i = slot.GetValue(1);
      if (first < 0 || w < which || (w == which && i < index)) {
        first = c;
        which = w;
        index = i;
      }
    }
    return first < 0 ? bad : first;
  }

  __aicore__ inline void LoadSlots(int64_t t) {
    if (chunk_end_ > chunk_begin_) aop_kernel::check::Sync<AscendC::HardEvent::S_MTE2>(*pipe_);  // the old chunk was read
    const int64_t left = tokens_.end - t;
    const int64_t count = left < kRacSlotChunk ? left : kRacSlotChunk;
    AscendC::DataCopyExtParams params{1, static_cast<uint32_t>(count * sizeof(S)), 0, 0, 0};
    AscendC::DataCopyPadExtParams<S> pad{false, 0, 0, 0};
    AscendC::DataCopyPad(slot_chunk_, slots_[t], params, pad);
    aop_kernel::check::Sync<AscendC::HardEvent::MTE2_S>(*pipe_);
    chunk_begin_ = t;
    chunk_end_ = t + count;
  }

  AscendC::TPipe* pipe_ = nullptr;
  const ReshapeAndCacheTiling* tiling_ = nullptr;
  AscendC::TBuf<AscendC::TPosition::VECCALC> check_buf_;  // the check slots (aop_kernel::check)
  AscendC::TBuf<AscendC::TPosition::VECCALC> slot_buf_;   // a chunk of this core's slot_mapping
  AscendC::GlobalTensor<S> slots_;
  AscendC::LocalTensor<S> slot_chunk_;
  int64_t chunk_begin_ = 0;  // slot_chunk_ holds slot_mapping[chunk_begin_, chunk_end_)
  int64_t chunk_end_ = 0;
  aop_kernel::CoreShare tokens_{0, 0};  // the tokens this core writes
};
