// The cross-core hand-offs of sparse_flash_attention (MIX 1 AIC : 2 AIV), per tile n of a group
// (its rows' tiles counted in order; slot n % 2 of each ring in the AIC's GM slots):
//   kScoresReady + s  AIC -> AIVs  S = Q.K^T of tile n is in S slot s      (after its Fixpipe)
//   kProbsReady + s   AIVs -> AIC  P of tile n is in P slot s             (after the AIVs' copies)
//   kProbsEarly + s   AIVs -> AIC  the first EarlyHeads rows of each AIV's P of tile n are in
//                                  P slot s (after their copies; only where EarlyHeads > 0)
//   kOutReady + s     AIC -> AIVs  P.V of tile n is in O slot s           (after its Fixpipes)
// Mode 2 (CrossCoreSetFlag(ISASI).md): an AIC set reaches both AIVs of its group; an AIV set
// reaches the AIC once both AIVs have set. Both AIVs take part in every hand-off, also one with
// no heads (N1 = 1). No "slot free" flags are needed: the AIC overwrites S slot s (tile n + 2)
// only after it has waited for P of tile n (its P.V of tile n always precedes its Q.K^T of tile
// n + 2, also across rows), which each AIV publishes after it read S of tile n; it overwrites O
// slot s after waiting for P of tile n + 2, published after the AIV read O of tile n
// (kernel/sparse_flash_attention_vector.h keeps that order); the AIVs overwrite P slot s (tile
// n + 2) after S of tile n + 2, which the AIC publishes after its P.V of tile n read P.
// kProbsEarly of tile n is set before kProbsReady of tile n and waited for before it, so it
// needs no slot-free flag of its own.
// Flag ids 11..14 are left to SyncAll.
#pragma once
#include "kernel_operator.h"
#include "kernel/sparse_flash_attention_tiling.h"

namespace sparse_flash_attention {

using namespace AscendC;  // pipe_t (PIPE_FIX, ...) is global with CANN, in AscendC in the emulator

constexpr uint16_t kScoresReady = 0;   // 0, 1
constexpr uint16_t kProbsReady = 2;    // 2, 3
constexpr uint16_t kOutReady = 4;      // 4, 5
constexpr uint16_t kProbsEarly = 6;    // 6, 7
constexpr uint16_t kVerdictReady = 8;  // the check phase's verdict, AIVs -> AIC

__aicore__ inline int32_t SlotOf(int64_t tile) { return static_cast<int32_t>(tile % 2); }

// P in two hand-offs: each AIV publishes the P rows of all its softmax chunks but the last
// (kProbsEarly), then the last chunk's (kProbsReady); the AIC copies the early rows into L1 and
// L0A while the AIVs work on their last chunk, so after kProbsReady only the last chunk's rows
// are on its way to P.V. Returns the early heads of each AIV (0: P in one hand-off). Needs both
// AIVs' heads in whole 16-row blocks of the P tile (N1 = m_pad = 2 heads_per_aiv, whole 16-head
// chunks) and at least two chunks per AIV.
__aicore__ inline int64_t EarlyHeads(const SparseFlashAttentionTiling& t) {
  const int64_t hpa = t.heads_per_aiv, sh = t.softmax_heads;
  if (t.heads != t.m_pad || t.heads != 2 * hpa || hpa % 16 != 0 || sh <= 0 || sh % 16 != 0) return 0;
  const int64_t chunks = (hpa + sh - 1) / sh;
  return chunks < 2 ? 0 : (chunks - 1) * sh;
}

}  // namespace sparse_flash_attention
