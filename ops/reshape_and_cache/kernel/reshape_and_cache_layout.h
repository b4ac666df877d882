// Where a row chunk lands in a cache, for both kernels (the bit copy and the int8 write): the one
// addressing path of every cache_mode and stride pattern (RacCacheLayout, host/cache_layout.h).
#pragma once
#include "kernel_operator.h"
#include "kernel/reshape_and_cache_tiling.h"

// Element offset of row element j at `slot`.
__aicore__ inline int64_t RacCacheOffset(const RacCacheLayout& l, int64_t slot, int64_t j) {
  const int64_t b = slot / l.block_size, o = slot % l.block_size;
  const int64_t g = j / l.group_elems, r = j % l.group_elems;
  return b * l.block_stride + o * l.slot_stride + g * l.group_stride + (r / l.chunk_elems) * l.chunk_stride +
         r % l.chunk_elems;
}

// The staged chunk `buf` = row elements [j, j + count) of one group into `cache` at `slot`. One
// piece when the group is one chunk; else (j and count multiples of F, F * sizeof(T) = 32 bytes,
// host-checked) count / F bursts of F elements, chunk_stride apart: one strided DataCopyPad.
template <typename T>
__aicore__ inline void RacWriteChunk(const AscendC::GlobalTensor<T>& cache, const RacCacheLayout& l, int64_t slot,
                                     int64_t j, uint32_t count, const AscendC::LocalTensor<T>& buf) {
  const int64_t at = RacCacheOffset(l, slot, j);
  if (l.chunk_elems == l.group_elems) {
    AscendC::DataCopyExtParams params{1, count * static_cast<uint32_t>(sizeof(T)), 0, 0, 0};
    AscendC::DataCopyPad(cache[at], buf, params);
    return;
  }
  const uint32_t f_bytes = static_cast<uint32_t>(l.chunk_elems * static_cast<int64_t>(sizeof(T)));
  AscendC::DataCopyExtParams params{static_cast<uint16_t>(count / l.chunk_elems), f_bytes, 0,
                                    static_cast<uint32_t>((l.chunk_stride - l.chunk_elems) * static_cast<int64_t>(sizeof(T))),
                                    0};
  AscendC::DataCopyPad(cache[at], buf, params);
}
