// Paired key tiles of lightning_indexer_quant: the AIC loads a full key tile of a multiple of 32
// keys as pairs of keys, one 2D-byte Nd2Nz row per pair (kernel/liq_cube.h IssuePairedKeys: half
// the per-row DMA bursts of one key per row). Within each group of 32 keys, stage 1's rows (and
// so the slot's scores) then hold the even keys, then the odd ones: position q has key
// PairedKey(q). The AIV puts the scores back in key order before anything reads them
// (kernel/liq_key_scale.h).
#pragma once
#include "kernel/lightning_indexer_tiling.h"

namespace lightning_indexer {

constexpr int64_t kPairGroup = 32;  // keys of one group: two 16-row blocks (even keys, odd keys)

// Whether a tile of n keys is loaded as pairs: a full tile of whole groups.
__aicore__ inline bool PairedTile(const LightningIndexerTiling& t, int64_t n) {
  return n == t.tile_keys && t.tile_keys % kPairGroup == 0;
}

// The key (0 .. 31, in its group) at position q of a paired group: row q % 16 of row block q / 16.
__aicore__ inline int32_t PairedKey(int32_t q) { return 2 * (q % 16) + q / 16; }

}  // namespace lightning_indexer
