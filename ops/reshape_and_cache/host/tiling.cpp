// Launch tiling of the AscendC kernel: tokens split evenly over the vector cores, rows staged
// through UB in the largest 32-byte-aligned bursts two buffers allow.
#include <algorithm>

#include "ascend_ops/cache.hpp"
#include "ascend_ops/hash.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/reshape_and_cache.h"

namespace aop::reshape_and_cache {
namespace {

constexpr int64_t kBurstAlign = 32;
constexpr int64_t kMaxBursts = 4095;  // DataCopyPad blockCount limit

ReshapeAndCacheTiling compute(const Args& a, const aop_platform& platform) {
  const TensorView key(a.key);
  ReshapeAndCacheTiling t{};
  t.num_tokens = a.slot_mapping.shape[0];
  t.key_row_elems = key.dim(1) * key.dim(2);
  t.key_token_stride = key.dim(0) > 1 ? key.stride(0) : t.key_row_elems;
  if (a.has_value) {
    const TensorView value(a.value);
    t.value_row_elems = value.dim(1) * value.dim(2);
    t.value_token_stride = value.dim(0) > 1 ? value.stride(0) : t.value_row_elems;
  }
  t.block_size = cache_block_size(a);
  t.num_blocks = cache_num_blocks(a);
  t.num_slots = t.num_blocks * t.block_size;
  t.has_value = a.has_value ? 1 : 0;
  t.cache_mode = a.cache_mode;
  t.elem_bytes = static_cast<int32_t>(aop_dtype_size(a.key.dtype));
  t.slot_bytes = static_cast<int32_t>(aop_dtype_size(a.slot_mapping.dtype));

  const int64_t cores = std::max<int64_t>(1, platform.aiv_cores);
  t.block_dim = static_cast<int32_t>(std::clamp<int64_t>(t.num_tokens, 1, cores));
  t.tokens_per_core = static_cast<int32_t>(t.num_tokens / t.block_dim);
  t.cores_with_extra = static_cast<int32_t>(t.num_tokens % t.block_dim);

  const int64_t row_bytes = std::max(t.key_row_elems, t.value_row_elems) * t.elem_bytes;
  const int64_t row_bursts = (row_bytes + kBurstAlign - 1) / kBurstAlign * kBurstAlign;
  int64_t buffer_bytes = (platform.ub_bytes - rac_check_ub_bytes(t.block_dim)) / kRacBufferNum / kBurstAlign * kBurstAlign;
  // NZ writes one DataCopyPad burst per 32-byte fractal row: at most 4095 bursts per copy.
  if (a.cache_mode == kCacheNZ) buffer_bytes = std::min<int64_t>(buffer_bytes, kMaxBursts * kBurstAlign);
  t.chunk_elems = static_cast<int32_t>(std::max<int64_t>(kBurstAlign, std::min(row_bursts, buffer_bytes)) /
                                       t.elem_bytes);
  return t;
}

}  // namespace

ReshapeAndCacheTiling tiling(const Args& a, const aop_platform& platform) {
  KeyBuilder key("reshape_and_cache");
  key.add_int(a.cache_mode).add_bool(a.has_value).add_tensor(TensorView(a.key));
  if (a.has_value) key.add_tensor(TensorView(a.value)).add_tensor(TensorView(a.value_cache));
  key.add_tensor(TensorView(a.key_cache)).add_tensor(TensorView(a.slot_mapping)).add_platform(platform);
  return tiling_cache().get_or_compute_pod<ReshapeAndCacheTiling>(key, [&] { return compute(a, platform); });
}

}  // namespace aop::reshape_and_cache
