// The cross-core hand-offs of sparse_flash_attention (MIX 1 AIC : 2 AIV), per tile n of a group
// (its rows' tiles counted in order; slot n % 2 of each ring in the AIC's GM slots):
//   kScoresReady + s  AIC -> AIVs  S = Q.K^T of tile n is in S slot s      (after its Fixpipe)
//   kProbsReady + s   AIVs -> AIC  P of tile n is in P slot s             (after the AIVs' copies)
//   kOutReady + s     AIC -> AIVs  P.V of tile n is in O slot s           (after its Fixpipes)
// Mode 2 (CrossCoreSetFlag(ISASI).md): an AIC set reaches both AIVs of its group; an AIV set
// reaches the AIC once both AIVs have set. Both AIVs take part in every hand-off, also one with
// no heads (N1 = 1). No "slot free" flags are needed: the AIC overwrites S slot s (tile n + 2)
// only after it has waited for P of tile n (its P.V of tile n always precedes its Q.K^T of tile
// n + 2, also across rows), which each AIV publishes after it read S of tile n; it overwrites O
// slot s after waiting for P of tile n + 2, published after the AIV read O of tile n
// (kernel/sparse_flash_attention_vector.h keeps that order); the AIVs overwrite P slot s (tile
// n + 2) after S of tile n + 2, which the AIC publishes after its P.V of tile n read P.
// Flag ids 11..14 are left to SyncAll.
#pragma once
#include "kernel_operator.h"

namespace sparse_flash_attention {

using namespace AscendC;  // pipe_t (PIPE_FIX, ...) is global with CANN, in AscendC in the emulator

constexpr uint16_t kScoresReady = 0;   // 0, 1
constexpr uint16_t kProbsReady = 2;    // 2, 3
constexpr uint16_t kOutReady = 4;      // 4, 5
constexpr uint16_t kVerdictReady = 8;  // the check phase's verdict, AIVs -> AIC

__aicore__ inline int32_t SlotOf(int64_t tile) { return static_cast<int32_t>(tile % 2); }

}  // namespace sparse_flash_attention
