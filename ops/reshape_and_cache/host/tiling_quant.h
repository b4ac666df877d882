// The int8 write's part of the launch tiling (host/tiling_quant.cpp).
#pragma once
#include "ascend_ops/platform.h"
#include "kernel/reshape_and_cache_tiling.h"

namespace aop::reshape_and_cache {

// Completes `t` for kv_cache_dtype "int8": its token split (block_dim, tokens_per_core,
// cores_with_extra) is the caller's unless a sliced split (per-channel tables) is chosen;
// table_elems, chunk_elems and the sliced fields.
void quant_tiling(ReshapeAndCacheTiling& t, const aop_platform& platform);

}  // namespace aop::reshape_and_cache
