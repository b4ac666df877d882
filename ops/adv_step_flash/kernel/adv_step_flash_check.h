// The GM side of the all-or-nothing check phase: this core's 64-byte check slot in the workspace,
// the verdict over every core's slot after SyncAll, and the copy of the first error into the error
// record. A copy of this file is in each op's kernel/ (ascendc-api-check compiles an op with
// -I<opdir> only, so a header in common/ would be invisible to it).
// Every scalar GM access costs a data-cache miss, so after SyncAll the slots come in by one DMA
// (block_dim scalar reads per core otherwise), and a clean core publishes only word 0.
#pragma once
#include "kernel_operator.h"

namespace asf_check {

constexpr int32_t kWords = 8;  // a slot and the record: 8 int64, one 64-byte data-cache line
constexpr uint32_t kSlotBytes = kWords * sizeof(int64_t);

// UB the verdict needs besides the op's own buffers: every core's slot.
__aicore__ inline uint32_t UbBytes(int64_t block_dim) { return static_cast<uint32_t>(block_dim * kSlotBytes); }

// GlobalTensor::SetValue writes the core's data cache, which other cores and the host see only
// after a flush (GlobalTensor/SetValue.md); and a core may hold a line cached by an earlier launch,
// so a scalar read of the record invalidates the line first.
__aicore__ inline void FlushLine(const AscendC::GlobalTensor<int64_t>& line) {
  AscendC::DataCacheCleanAndInvalid<int64_t, AscendC::CacheLine::SINGLE_CACHE_LINE,
                                    AscendC::DcciDst::CACHELINE_OUT>(line);
}

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

// Publishes this core's verdict `record` (word 0 = 0: clean), SyncAll of the AIVs, and returns
// the lowest core whose verdict holds an error (the lowest core holds the lowest index), or -1.
// Every core's slot is then in `ub` (UbBytes(block_dim)), for Record. A clean slot is word 0 only:
// the other words are read only from a slot that holds an error.
__aicore__ inline int64_t Exchange(AscendC::TPipe& pipe, GM_ADDR workspace, int64_t core, int64_t block_dim,
                                   const int64_t* record, const AscendC::LocalTensor<int64_t>& ub) {
  if (block_dim == 1) {  // nothing to exchange
    for (int32_t i = 0; i < kWords; ++i) ub.SetValue(i, record[i]);
    return record[0] != 0 ? 0 : -1;
  }
  AscendC::GlobalTensor<int64_t> slot = Words(workspace, core);
  const int32_t words = record[0] != 0 ? kWords : 1;
  for (int32_t i = 0; i < words; ++i) slot.SetValue(i, record[i]);
  FlushLine(slot);
  // A hardware SyncAll of the AIVs: the kernel is MIX_AIV_1_0 (an AIV_ONLY launch has no
  // cross-core scheduler, SyncAll.md / CrossCoreSetFlag(ISASI).md).
  AscendC::SyncAll<true>();
  AscendC::DataCopyExtParams params{1, static_cast<uint32_t>(block_dim * kSlotBytes), 0, 0, 0};
  AscendC::DataCopyPadExtParams<int64_t> pad{false, 0, 0, 0};
  AscendC::DataCopyPad(ub, Words(workspace, 0, block_dim), params, pad);
  Sync<AscendC::HardEvent::MTE2_S>(pipe);
  for (int64_t c = 0; c < block_dim; ++c) {
    if (ub.GetValue(c * kWords) != 0) return c;
  }
  return -1;
}

// Copies core c's slot (from Exchange's `ub`) into the error record unless the record already
// holds an error (the first error wins until the host has reported and cleared it). One core
// calls this.
__aicore__ inline void Record(GM_ADDR error_record, const AscendC::LocalTensor<int64_t>& ub, int64_t core) {
  AscendC::GlobalTensor<int64_t> record = Words(error_record, 0);
  FlushLine(record);
  if (record.GetValue(0) != 0) return;
  for (int32_t i = 0; i < kWords; ++i) record.SetValue(i, ub.GetValue(core * kWords + i));
  FlushLine(record);
}

}  // namespace asf_check
