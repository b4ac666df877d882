// The GM side of the all-or-nothing check phase: this core's 64-byte check slot in the workspace,
// the verdict over every core's slot after SyncAll, and the copy of the first error into the error
// record. A copy of this file is in each op's kernel/ (ascendc-api-check compiles an op with
// -I<opdir> only, so a header in common/ would be invisible to it).
#pragma once
#include "kernel_operator.h"

namespace rac_check {

constexpr int32_t kWords = 8;  // a slot and the record: 8 int64, one 64-byte data-cache line

// GlobalTensor::SetValue writes the core's data cache, which other cores and the host see only
// after a flush (GlobalTensor/SetValue.md); and a core may hold a line cached by an earlier launch,
// so reads of another core's slot or of the record invalidate the line first.
__aicore__ inline void FlushLine(const AscendC::GlobalTensor<int64_t>& line) {
  AscendC::DataCacheCleanAndInvalid<int64_t, AscendC::CacheLine::SINGLE_CACHE_LINE,
                                    AscendC::DcciDst::CACHELINE_OUT>(line);
}

__aicore__ inline AscendC::GlobalTensor<int64_t> Words(GM_ADDR base, int64_t index) {
  AscendC::GlobalTensor<int64_t> words;
  words.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(base) + index * kWords, kWords);
  return words;
}

// Writes this core's verdict (word 0 = 0: clean) into its slot and flushes it.
__aicore__ inline void Publish(GM_ADDR workspace, int64_t core, const int64_t* record) {
  AscendC::GlobalTensor<int64_t> slot = Words(workspace, core);
  for (int32_t i = 0; i < kWords; ++i) slot.SetValue(i, record[i]);
  FlushLine(slot);
}

// Word 0 of core c's slot (after SyncAll).
__aicore__ inline int64_t SlotCode(GM_ADDR workspace, int64_t core) {
  AscendC::GlobalTensor<int64_t> slot = Words(workspace, core);
  FlushLine(slot);
  return slot.GetValue(0);
}

// Copies core c's slot into the error record unless the record already holds an error (the first
// error wins until the host has reported and cleared it). One core calls this.
__aicore__ inline void Record(GM_ADDR error_record, GM_ADDR workspace, int64_t core) {
  AscendC::GlobalTensor<int64_t> record = Words(error_record, 0);
  AscendC::GlobalTensor<int64_t> slot = Words(workspace, core);
  FlushLine(record);
  if (record.GetValue(0) != 0) return;
  for (int32_t i = 0; i < kWords; ++i) record.SetValue(i, slot.GetValue(i));
  FlushLine(record);
}

}  // namespace rac_check
