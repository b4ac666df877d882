// Tiling of the example element-wise add kernel: a POD shared by host and kernel.
#pragma once
#include <cstdint>

struct AddTiling {
  uint32_t total;     // elements in x, y and z
  uint32_t per_core;  // elements per block; block b owns [b * per_core, min(total, (b + 1) * per_core))
  uint32_t tile;      // elements per UB tile; a multiple of 32 bytes
};

// Host side: split `total` elements over at most `max_cores` blocks and size the tiles so that
// 3 queues x BUFFER_NUM buffers fit in `ub_bytes`. Returns the block count to launch.
inline uint32_t AddTilingFor(uint32_t total, uint32_t elem_bytes, uint32_t max_cores, uint64_t ub_bytes,
                             AddTiling* t) {
  const uint32_t align = 32 / elem_bytes;
  uint32_t per_core = (total + max_cores - 1) / max_cores;
  per_core = (per_core + align - 1) / align * align;
  if (per_core == 0) per_core = align;
  const uint64_t max_tile = ub_bytes / (3 * 2) / elem_bytes / align * align;
  const uint32_t tile = static_cast<uint32_t>(per_core < max_tile ? per_core : max_tile);
  *t = AddTiling{total, per_core, tile < 4096 ? tile : 4096};
  return (total + per_core - 1) / per_core;
}
