// The cross-core hand-off of lightning_indexer (MIX 1 AIC : 2 AIV): the AIC of a group fills a
// ring of `slots` GM score slots (2, or 4 with halves: tiling.slots), its two AIVs read them. Each
// slot has two cross-core flags (CrossCoreSetFlag(ISASI).md, mode 2: an AIC set reaches both AIVs
// of its group; an AIV set reaches the AIC once both AIVs have set):
//   kScoresReady + slot  AIC -> AIVs  after the slot's last Fixpipe (PIPE_FIX)
//   kSlotFree + slot     AIVs -> AIC  after the AIV's last read of the slot (PIPE_MTE2)
// The AIC starts with `slots` credits (all slots free) and waits for a slot's free flag only when
// it reuses the slot; at the end it drains the outstanding frees, so no set is left pending. Both
// AIVs take part in every hand-off, also when one of them has no rows of the group or (halves)
// the block belongs to the other AIV's split: it then frees the slot at once.
#pragma once
#include "kernel_operator.h"

namespace lightning_indexer {

using namespace AscendC;  // pipe_t (PIPE_FIX, ...) is global with CANN, in AscendC in the emulator

constexpr int32_t kMaxSlots = 4;
constexpr uint16_t kScoresReady = 0;   // flags 0 .. 3
constexpr uint16_t kSlotFree = 4;      // flags 4 .. 7
constexpr uint16_t kVerdictReady = 8;  // the check phase's verdict, AIVs -> AIC (kernel/lightning_indexer_check.h)

// The AIC side: Acquire before writing slot n % slots (the n-th block of this AIC), Publish after,
// in the same order. Publishes may lag the acquires (lightning_indexer_quant's AIC computes up to
// `slots` blocks before the verdict, kernel/liq_cube.h): Free() says whether the next Acquire
// takes a slot without waiting, which is the only case where an unpublished block may be pending
// (a wait would be for a block not yet published).
class CubeHandshake {
 public:
  __aicore__ inline void Init(int32_t slots) { slots_ = slots; }
  __aicore__ inline int32_t Acquire() {
    const int32_t slot = static_cast<int32_t>(acquired_ % slots_);
    if (acquired_ >= slots_) AscendC::CrossCoreWaitFlag(kSlotFree + slot);
    ++acquired_;
    return slot;
  }
  __aicore__ inline bool Free() const { return acquired_ < slots_; }
  __aicore__ inline void Publish(int32_t slot) {
    AscendC::CrossCoreSetFlag<2, PIPE_FIX>(kScoresReady + slot);
    ++used_;
  }
  // Waits for the frees not consumed by an Acquire (the last `slots` blocks).
  __aicore__ inline void Drain() {
    const int64_t first = used_ > slots_ ? used_ - slots_ : 0;
    for (int64_t n = first; n < used_; ++n) AscendC::CrossCoreWaitFlag(kSlotFree + static_cast<int32_t>(n % slots_));
  }

 private:
  int64_t used_ = 0;      // blocks published
  int64_t acquired_ = 0;  // slots acquired (>= used_)
  int32_t slots_ = 2;
};

// The AIV side: Await the n-th block's slot, Release it once read (after the AIV's last copy
// out of it: the set is ordered behind the MTE2 copies issued before it). Slots are released in
// the order they were awaited.
class VectorHandshake {
 public:
  __aicore__ inline void Init(int32_t slots) { slots_ = slots; }
  __aicore__ inline int32_t Await() {
    const int32_t slot = static_cast<int32_t>(awaited_ % slots_);
    AscendC::CrossCoreWaitFlag(kScoresReady + slot);
    ++awaited_;
    return slot;
  }
  __aicore__ inline void Release(int32_t slot) { AscendC::CrossCoreSetFlag<2, PIPE_MTE2>(kSlotFree + slot); }

 private:
  int64_t awaited_ = 0;
  int32_t slots_ = 2;
};

}  // namespace lightning_indexer
