// Block identity and synchronisation (documented: GetBlockIdx, GetBlockNum, PipeBarrier,
// SetFlag/WaitFlag, SyncAll). One emulated block runs its pipes in program order, so
// PipeBarrier and flags order nothing; WaitFlag without a SetFlag and a SyncAll that not
// every block reaches are errors (both hang on hardware).
#pragma once
#include "ascendc_cpu/global_tensor.h"
#include "ascendc_cpu/local_tensor.h"

namespace AscendC {

inline int64_t GetBlockIdx() { return ascendc_cpu::detail::BlockIdx(); }
inline int64_t GetBlockNum() { return ascendc_cpu::detail::BlockNum(); }
inline int64_t GetSubBlockIdx() { return 0; }
inline int64_t GetSubBlockNum() { return 1; }

template <pipe_t pipe>
void PipeBarrier() {}

template <HardEvent event>
void SetFlag(event_t id, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  ascendc_cpu::detail::FlagSet(static_cast<int>(event), id, loc);
}
template <HardEvent event>
void WaitFlag(event_t id, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  ascendc_cpu::detail::FlagWait(static_cast<int>(event), id, loc);
}

// Hardware barrier across all blocks of the launch.
template <bool isAIVOnly = true>
void SyncAll(ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  ascendc_cpu::detail::SyncAllBlocks(loc);
}
// Software barrier through a GM workspace: the emulator synchronises directly and leaves the
// workspaces untouched.
template <bool isAIVOnly = true>
void SyncAll(const GlobalTensor<int32_t>&, const LocalTensor<int32_t>&, int32_t = 0,
             ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  ascendc_cpu::detail::SyncAllBlocks(loc);
}

// Scalar GM writes go through the scalar unit's data cache on hardware; the emulator writes GM
// directly, so flushing has nothing to do.
enum class CacheLine : uint8_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class DcciDst : uint8_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };
template <class T, CacheLine entire = CacheLine::SINGLE_CACHE_LINE, DcciDst dst = DcciDst::CACHELINE_OUT>
void DataCacheCleanAndInvalid(const GlobalTensor<T>&) {}

}  // namespace AscendC
