// Core identity and synchronisation (documented: GetBlockIdx, GetBlockNum, GetSubBlockIdx,
// GetSubBlockNum, GetTaskRatio, PipeBarrier, SetFlag/WaitFlag, SyncAll, CrossCoreSetFlag /
// CrossCoreWaitFlag, DataCacheCleanAndInvalid). Pipes run asynchronously in the emulator's model:
// these calls are the happens-before edges of its race detector (see README.md) and the sync
// edges of its timing model. A wait nothing will satisfy is an error (hang / sync-mismatch).
//   GetBlockIdx: AIC [0, block_dim), AIV [0, ratio * block_dim) with AIV = block * ratio + sub;
//   GetBlockNum: block_dim on both core types (GetBlockIdx.md, GetBlockNum.md).
#pragma once
#include "ascendc_cpu/global_tensor.h"
#include "ascendc_cpu/local_tensor.h"

namespace AscendC {

inline int64_t GetBlockIdx() { return ascendc_cpu::detail::BlockIdx(); }
inline int64_t GetBlockNum() { return ascendc_cpu::detail::BlockNum(); }
inline int64_t GetSubBlockIdx() { return ascendc_cpu::detail::SubBlockIdx(); }
inline int64_t GetSubBlockNum() { return ascendc_cpu::detail::SubBlockNum(); }
inline int64_t GetTaskRatio() { return ascendc_cpu::detail::TaskRatio(); }

template <pipe_t pipe>
void PipeBarrier(ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  ascendc_cpu::detail::Barrier(static_cast<int>(pipe), loc);
}

template <HardEvent event>
void SetFlag(event_t id, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  ascendc_cpu::detail::FlagSet(static_cast<int>(event), id, loc);
}
template <HardEvent event>
void WaitFlag(event_t id, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  ascendc_cpu::detail::FlagWait(static_cast<int>(event), id, loc);
}

// Hardware barrier across the cores of the launch (PipeBarrier<PIPE_ALL> first, as documented):
// isAIVOnly = true syncs every AIV (an AIC calling it is a core-type error), false every core. It
// goes through the cross-core scheduler (flag ids 11..14), which AIV_ONLY / AIC_ONLY launches do
// not start: there it is a kernel-type error (SyncAll.md: a vector kernel is __mix__(0, 1), i.e.
// KERNEL_TYPE_MIX_AIV_1_0); isAIVOnly = false without both core types waits forever (hang).
template <bool isAIVOnly = true>
void SyncAll(ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  ascendc_cpu::detail::SyncAllBlocks(loc, isAIVOnly, true);
}
// Software barrier through a GM workspace (any kernel type): the emulator synchronises directly
// and leaves the workspaces untouched (the real one needs them zeroed: not modelled).
template <bool isAIVOnly = true>
void SyncAll(const GlobalTensor<int32_t>&, const LocalTensor<int32_t>&, int32_t = 0,
             ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  ascendc_cpu::detail::SyncAllBlocks(loc, isAIVOnly, false);
}

// Cross-core flags (CrossCoreSetFlag(ISASI).md, Atlas A2: modes 0, 1, 2; flagId 0..15; pipe not
// PIPE_S / PIPE_ALL; each counter holds at most 15 pending sets; MIX kernel types only).
template <uint8_t modeId, pipe_t pipe>
void CrossCoreSetFlag(uint16_t flagId, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  ascendc_cpu::detail::CrossCoreSet(modeId, static_cast<int>(pipe), flagId, loc);
}
template <uint8_t modeId = 0, pipe_t pipe = PIPE_S>
void CrossCoreWaitFlag(uint16_t flagId, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  ascendc_cpu::detail::CrossCoreWait(flagId, loc);
}

// GlobalTensor::SetValue writes the core's scalar data cache (64-byte lines); other cores and the
// DMA pipes see the bytes only after DataCacheCleanAndInvalid (GlobalTensor/SetValue.md). The
// emulator models the cache's visibility, not its contents: see dcache-stale in README.md.
enum class CacheLine : uint8_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class DcciDst : uint8_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };
template <class T, CacheLine entire = CacheLine::SINGLE_CACHE_LINE, DcciDst dst = DcciDst::CACHELINE_OUT>
void DataCacheCleanAndInvalid(const GlobalTensor<T>& t, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  ascendc_cpu::detail::DcacheCleanInvalid(t.GetPhyAddr(), entire == CacheLine::ENTIRE_DATA_CACHE, loc);
}

}  // namespace AscendC
