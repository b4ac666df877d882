// Launch tiling of the AscendC kernel: tokens split evenly over the vector cores; as many of a
// core's tokens as UB holds stay resident (codes and scales) from the check phase to the write.
#include <algorithm>

#include "ascend_ops/cache.hpp"
#include "ascend_ops/hash.hpp"
#include "ascend_ops/kernel_launch.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/indexer_k_quant_and_cache.h"

namespace aop::indexer_k_quant_and_cache {
namespace {

int64_t align32(int64_t bytes) { return (bytes + 31) / 32 * 32; }

// The cores: the fastest split (common's launch::cores_for_cost) whose check exchange stays within
// 1/40 of the bytes the op must move (k read, codes and scales written, the slots): a multi-core
// launch pays the exchange, block_dim^2 * 8 + block_dim * 8 bytes, and a SyncAll; one core pays
// neither. The cycles are fitted to the emulator's timing model of a 910B (D = 128, bfloat16 k,
// float16 scales, T = 16..256 on 1..43 cores, within 2%): a token's vector steps grow with D, its
// scalar scale and ReduceMax with the groups; a batch pays the DMA latency.
int64_t cores(const IndexerKQuantTiling& t, const Args& a, const Dims& d, const aop_platform& platform) {
  const int64_t in_bytes = static_cast<int64_t>(aop_dtype_size(a.k.dtype));
  int64_t batch = std::min<int64_t>(kIkqMaxBatch, std::max<int64_t>(t.num_tokens, 1));
  while (batch > 1 && ikq_batch_ub_bytes(batch, d.head_dim, d.quant_block, t.scale_row_bytes) > kIkqBatchUbBytes) --batch;
  const launch::CoreCost cost{3 * d.head_dim / 16 + 53 * d.groups, batch, 604, 1537};
  const int64_t minimum = t.num_tokens * (d.head_dim * in_bytes + d.head_dim + d.groups * t.scale_bytes + t.slot_bytes);
  return launch::cores_for_cost(t.num_tokens, platform.aiv_cores, cost, minimum / 40);
}

IndexerKQuantTiling compute(const Args& a, const Dims& d, const aop_platform& platform) {
  IndexerKQuantTiling t{};
  t.num_tokens = d.written;
  t.head_dim = d.head_dim;
  t.quant_block = d.quant_block;
  t.groups = d.groups;
  t.k_token_stride = d.k_row_stride;
  t.num_blocks = d.num_blocks;
  t.block_size = d.block_size;
  t.num_slots = d.num_blocks * d.block_size;
  t.cache_block_stride = d.cache_block_stride;
  t.scale_block_stride = d.scale_block_stride;
  t.k_dtype = static_cast<int32_t>(a.k.dtype);
  t.scale_bytes = static_cast<int32_t>(aop_dtype_size(a.k_scale_cache->dtype));
  t.slot_bytes = static_cast<int32_t>(aop_dtype_size(a.slot_mapping.dtype));
  t.check_scales = needs_scale_check(a, d) ? 1 : 0;
  t.scale_row_bytes = static_cast<int32_t>(align32(d.groups * 4));

  t.block_dim = static_cast<int32_t>(cores(t, a, d, platform));
  t.tokens_per_core = static_cast<int32_t>(t.num_tokens / t.block_dim);
  t.cores_with_extra = static_cast<int32_t>(t.num_tokens % t.block_dim);

  const int64_t most = t.tokens_per_core + (t.cores_with_extra > 0 ? 1 : 0);
  int64_t batch = std::min<int64_t>({kIkqMaxBatch, std::max<int64_t>(most, 1)});
  while (batch > 1 && ikq_batch_ub_bytes(batch, d.head_dim, d.quant_block, t.scale_row_bytes) > kIkqBatchUbBytes) --batch;
  t.batch_tokens = static_cast<int32_t>(batch);
  const int64_t free_ub = platform.ub_bytes - ikq_fixed_ub_bytes(t.block_dim) -
                          ikq_batch_ub_bytes(batch, d.head_dim, d.quant_block, t.scale_row_bytes);
  const int64_t per_token = align32(d.head_dim) + t.scale_row_bytes;
  t.resident_tokens = static_cast<int32_t>(std::clamp<int64_t>(free_ub / per_token, 0, most));
  return t;
}

}  // namespace

IndexerKQuantTiling kernel_tiling(const Args& a, const Dims& d, const aop_platform& platform) {
  KeyBuilder key("indexer_k_quant_and_cache");
  key.add_tensor(TensorView(a.k)).add_tensor(TensorView(a.k_cache)).add_tensor(TensorView(a.slot_mapping));
  key.add_tensor(TensorView(*a.k_scale_cache)).add_int(d.quant_block).add_platform(platform);
  return tiling_cache().get_or_compute_pod<IndexerKQuantTiling>(key, [&] { return compute(a, d, platform); });
}

}  // namespace aop::indexer_k_quant_and_cache
