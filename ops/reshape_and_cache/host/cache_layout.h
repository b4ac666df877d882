// Where a cache keeps one token's row: the one layout descriptor (kernel/reshape_and_cache_tiling.h:
// RacCacheLayout) every cache_mode and every stride pattern maps to, so the CPU kernel and the
// AscendC kernel each have a single addressing path. Element j of a token's H*D row at slot s
// (b = s / block_size, o = s % block_size) is at
//   b * block_stride + o * slot_stride + (j / G) * group_stride + ((j % G) / F) * chunk_stride + j % F
// (G = group_elems, F = chunk_elems). Validation (layouts, strides, overlap) is here too.
#pragma once
#include <cstdint>

#include "ascend_ops/tensor.hpp"
#include "host/reshape_and_cache.h"
#include "kernel/reshape_and_cache_tiling.h"

namespace aop::reshape_and_cache {

// The cache's shape checks for cache_mode 2 (head-major ND) and 3 (vLLM paged): the shapes of
// modes 0 and 1 stay in validate.cpp. `value` false: key_cache (Dk); true: value_cache (Dv,
// num_blocks and block_size from key_cache).
void expect_extra_mode_shape(const Args& a, bool value, int64_t heads, int64_t d);

// The H*D elements one slot of a cache holds, from its shape in `cache_mode` (0 when the cache
// does not have the mode's rank: validation reports that later).
int64_t cache_row_elems(const aop_tensor& cache, int32_t cache_mode, bool value);

// The strides of a cache of a validated shape: one F-wide chunk of a head contiguous (F = D for
// the ND modes, the fractal for NZ, x / 1 for vLLM's paged key / value), no negative stride, and
// no two slots / heads / chunks on the same elements. ValueError naming the cache otherwise.
void expect_cache_strides(const char* name, const aop_tensor& cache, int32_t cache_mode, bool value);

// The descriptor of a validated cache (`value`: the value cache of mode 3 has its own layout).
RacCacheLayout cache_layout(const aop_tensor& cache, int32_t cache_mode, bool value, int64_t heads, int64_t d);

// Element offset of element j of the row at `slot` (the CPU kernel's and the tests' one formula).
inline int64_t layout_offset(const RacCacheLayout& l, int64_t slot, int64_t j) {
  const int64_t b = slot / l.block_size, o = slot % l.block_size;
  const int64_t g = j / l.group_elems, r = j % l.group_elems;
  return b * l.block_stride + o * l.slot_stride + g * l.group_stride + (r / l.chunk_elems) * l.chunk_stride +
         r % l.chunk_elems;
}

// No two of the caches and the inputs share a byte: key_cache and value_cache (also partly, also
// interleaved views of one allocation whose blocks they split), and either cache with key,
// value, slot_mapping or a scale / offset. ValueError naming both otherwise. Reads no data.
void expect_no_overlap(const Args& a);

}  // namespace aop::reshape_and_cache
