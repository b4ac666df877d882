// The GM side of every kernel's all-or-nothing check phase: each checking core publishes a
// 64-byte check slot in the workspace (8 int64 words, the layout of the op's error record: [0]
// code, 0 = clean), SyncAll, the verdict over every core's slot, and the copy of the first error
// into the error record. The op decides what is checked and which error comes first.
// Every scalar GM access costs a data-cache miss, so after SyncAll the verdict codes (word 0 of
// every slot) come in by one strided DMA of 8 bytes per slot (block_dim scalar reads per core
// otherwise; every whole slot: block_dim^2 * 64 bytes of GM traffic per launch, not
// block_dim^2 * 8), a clean core publishes only word 0, and a slot's other words are read only
// when its code is an error.
#pragma once
#include "kernel_operator.h"

namespace aop_kernel::check {

constexpr int32_t kWords = 8;  // a slot and the record: 8 int64, one 64-byte data-cache line
constexpr uint32_t kSlotBytes = kWords * sizeof(int64_t);

// UB that the exchange of `checkers` cores takes (Exchange's `ub`): every code (one 32-byte UB
// block each), or the slot of the first error at its index.
__aicore__ inline uint32_t UbBytes(int64_t checkers) { return static_cast<uint32_t>(checkers * kSlotBytes); }

// Where LoadCodes leaves code c in `ub` (int64 index): a DMA burst starts on a 32-byte UB block.
constexpr int64_t kCodeStride = 32 / sizeof(int64_t);

// Bytes of the check protocol's workspace with `slots` slots (the host's
// launch::check_slots_bytes(slots, kWords)).
__aicore__ inline int64_t WorkspaceBytes(int64_t slots) { return slots * static_cast<int64_t>(kSlotBytes); }

// GlobalTensor::SetValue writes the core's data cache, which other cores and the host see only
// after a flush (GlobalTensor/SetValue.md); and a core may hold a line cached by an earlier launch,
// so a scalar read of another core's slot or of the record invalidates the line first.
__aicore__ inline void FlushLine(const AscendC::GlobalTensor<int64_t>& line) {
  AscendC::DataCacheCleanAndInvalid<int64_t, AscendC::CacheLine::SINGLE_CACHE_LINE,
                                    AscendC::DcciDst::CACHELINE_OUT>(line);
}

// Slots [index, index + count) of the slot array at `base`.
__aicore__ inline AscendC::GlobalTensor<int64_t> Words(GM_ADDR base, int64_t index, int64_t count = 1) {
  AscendC::GlobalTensor<int64_t> words;
  words.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(base) + index * kWords, count * kWords);
  return words;
}

// One pipe waits for another (an event id the pipe has free).
template <AscendC::HardEvent E>
__aicore__ inline void Sync(AscendC::TPipe& pipe) {
  const int32_t id = static_cast<int32_t>(pipe.FetchEventID(E));
  AscendC::SetFlag<E>(id);
  AscendC::WaitFlag<E>(id);
}

// Writes this core's verdict `record` (word 0 = 0: clean) into its slot and flushes it. A clean
// verdict is word 0 only: the other words are read only from a slot that holds an error.
__aicore__ inline void Publish(GM_ADDR workspace, int64_t core, const int64_t* record) {
  AscendC::GlobalTensor<int64_t> slot = Words(workspace, core);
  const int32_t words = record[0] != 0 ? kWords : 1;
  for (int32_t i = 0; i < words; ++i) slot.SetValue(i, record[i]);
  FlushLine(slot);
}

// Word 0 of slot `index` (read after SyncAll, or after the flag that follows its write).
__aicore__ inline int64_t SlotCode(GM_ADDR workspace, int64_t index) {
  AscendC::GlobalTensor<int64_t> slot = Words(workspace, index);
  FlushLine(slot);
  return slot.GetValue(0);
}

// Word 0 of each of the `checkers` slots into ub[c * kCodeStride] by one strided DMA, after SyncAll.
__aicore__ inline void LoadCodes(AscendC::TPipe& pipe, GM_ADDR workspace, int64_t checkers,
                                 const AscendC::LocalTensor<int64_t>& ub) {
  AscendC::DataCopyExtParams params{static_cast<uint16_t>(checkers), sizeof(int64_t), kSlotBytes - sizeof(int64_t), 0, 0};
  AscendC::DataCopyPadExtParams<int64_t> pad{false, 0, 0, 0};
  AscendC::DataCopyPad(ub, Words(workspace, 0, checkers), params, pad);
  Sync<AscendC::HardEvent::MTE2_S>(pipe);
}

// Slot `index` (which holds an error) into ub at index * kWords, for Record; after the scalar
// reads of the codes in ub.
__aicore__ inline void LoadSlot(AscendC::TPipe& pipe, GM_ADDR workspace, int64_t index,
                                const AscendC::LocalTensor<int64_t>& ub) {
  Sync<AscendC::HardEvent::S_MTE2>(pipe);
  AscendC::DataCopyExtParams params{1, kSlotBytes, 0, 0, 0};
  AscendC::DataCopyPadExtParams<int64_t> pad{false, 0, 0, 0};
  AscendC::DataCopyPad(ub[static_cast<uint32_t>(index * kWords)], Words(workspace, index), params, pad);
  Sync<AscendC::HardEvent::MTE2_S>(pipe);
}

// The check phase of a vector-only launch (MIX_AIV_1_0: an AIV_ONLY launch has no cross-core
// scheduler for SyncAll, SyncAll.md / CrossCoreSetFlag(ISASI).md): publishes this core's
// verdict, SyncAll of the AIVs, and returns the lowest core whose slot holds an error (the lowest
// core holds the lowest index), or -1. That core's slot is then in `ub` at its index, for Record.
__aicore__ inline int64_t Exchange(AscendC::TPipe& pipe, GM_ADDR workspace, int64_t core, int64_t block_dim,
                                   const int64_t* record, const AscendC::LocalTensor<int64_t>& ub) {
  if (block_dim == 1) {  // nothing to exchange
    for (int32_t i = 0; i < kWords; ++i) ub.SetValue(i, record[i]);
    return record[0] != 0 ? 0 : -1;
  }
  Publish(workspace, core, record);
  AscendC::SyncAll<true>();
  LoadCodes(pipe, workspace, block_dim, ub);
  for (int64_t c = 0; c < block_dim; ++c) {
    if (ub.GetValue(static_cast<uint32_t>(c * kCodeStride)) != 0) {
      LoadSlot(pipe, workspace, c, ub);
      return c;
    }
  }
  return -1;
}

// Copies core c's slot (in `ub` at c * kWords, as Exchange and MixVerdict leave it) into the error record unless the
// record already holds an error (the first error wins until the host has reported and cleared
// it). One core calls this.
__aicore__ inline void Record(GM_ADDR error_record, const AscendC::LocalTensor<int64_t>& ub, int64_t core) {
  AscendC::GlobalTensor<int64_t> record = Words(error_record, 0);
  FlushLine(record);
  if (record.GetValue(0) != 0) return;
  for (int32_t i = 0; i < kWords; ++i) record.SetValue(i, ub.GetValue(static_cast<uint32_t>(core * kWords + i)));
  FlushLine(record);
}

// The check phase of a MIX 1:2 launch (block_dim groups of one AIC and two AIVs), on the AIVs:
// publishes this AIV's verdict `record`, SyncAll of the AIVs, loads every code into `ub`
// (UbBytes(checkers) + one more slot for the verdict line), and picks the first error: the
// earliest phase (Phases::Of(code), the op's order of checks), then the lowest core (= the lowest
// batch). AIV 0 copies it into the error record; AIV 0 of each group writes the group's verdict
// line (slot checkers + group: word 0 = 1 on an error) and both AIVs set `kFlag` (mode 2) for their
// AIC, which reads the line with AicVerdict. Returns true when no AIV found an error. The op waits
// for its own reads of the UB it hands in here before calling.
template <class Phases, uint16_t kFlag>
__aicore__ inline bool MixVerdict(AscendC::TPipe& pipe, GM_ADDR workspace, GM_ADDR error_record, int64_t checkers,
                                  const int64_t* record, const AscendC::LocalTensor<int64_t>& ub) {
  const int64_t me = AscendC::GetBlockIdx();
  Publish(workspace, me, record);
  AscendC::SyncAll<true>();
  LoadCodes(pipe, workspace, checkers, ub);
  int64_t first = -1, first_phase = 0;
  for (int64_t c = 0; c < checkers; ++c) {
    const int64_t code = ub.GetValue(static_cast<uint32_t>(c * kCodeStride));
    if (code == 0) continue;
    const int64_t phase = Phases::Of(code);
    if (first < 0 || phase < first_phase) {
      first = c;
      first_phase = phase;
    }
  }
  if (first >= 0 && me == 0) {
    LoadSlot(pipe, workspace, first, ub);
    Record(error_record, ub, first);
  }
  if (AscendC::GetSubBlockIdx() == 0) {
    const AscendC::LocalTensor<int64_t> verdict = ub[static_cast<uint32_t>(checkers * kWords)];
    verdict.SetValue(0, static_cast<int64_t>(first >= 0 ? 1 : 0));
    Sync<AscendC::HardEvent::S_MTE3>(pipe);
    AscendC::DataCopyExtParams line{1, 8, 0, 0, 0};
    AscendC::DataCopyPad(Words(workspace, checkers + me / AscendC::GetTaskRatio()), verdict, line);
  }
  using namespace AscendC;  // pipe_t (PIPE_MTE3) is global with CANN, in AscendC in the emulator
  CrossCoreSetFlag<2, PIPE_MTE3>(kFlag);  // after AIV 0's line is written
  return first < 0;
}

// The AIC's side of MixVerdict: waits for `kFlag` (once per launch) and reads its group's verdict
// line by one scalar read (the AIC has no UB). True when the launch's inputs passed.
template <uint16_t kFlag>
__aicore__ inline bool AicVerdict(GM_ADDR workspace, int64_t checkers) {
  AscendC::CrossCoreWaitFlag(kFlag);
  return SlotCode(workspace, checkers + AscendC::GetBlockIdx()) == 0;
}

}  // namespace aop_kernel::check
