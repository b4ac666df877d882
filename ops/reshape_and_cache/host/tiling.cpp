// Launch tiling of the AscendC kernel: tokens split evenly over the vector cores, rows staged
// through UB in the largest 32-byte-aligned bursts two buffers allow (the int8 write:
// host/tiling_quant.cpp).
#include <algorithm>
#include <optional>

#include "ascend_ops/cache.hpp"
#include "ascend_ops/hash.hpp"
#include "ascend_ops/kernel_launch.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/cache_layout.h"
#include "host/reshape_and_cache.h"
#include "host/tiling_quant.h"

namespace aop::reshape_and_cache {
namespace {

constexpr int64_t kBurstAlign = 32;
constexpr int64_t kMaxBursts = 4095;  // DataCopyPad blockCount limit

void in_bytes(int64_t& row, int64_t& token_stride, RacCacheLayout& l, int64_t elem) {
  row *= elem;
  token_stride *= elem;
  for (int64_t* f : {&l.block_stride, &l.slot_stride, &l.group_elems, &l.group_stride, &l.chunk_elems, &l.chunk_stride,
                     &l.span_elems}) {
    *f *= elem;
  }
}

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
  t.elem_bytes = static_cast<int32_t>(aop_dtype_size(a.key_cache.dtype));
  t.slot_bytes = static_cast<int32_t>(aop_dtype_size(a.slot_mapping.dtype));
  t.quant = quantized(a.kv_cache_dtype) ? 1 : 0;
  t.in_dtype = a.key.dtype;
  const std::optional<aop_tensor>* scales[4] = {&a.k_scale, &a.v_scale, &a.k_offset, &a.v_offset};
  for (int i = 0; i < 4; ++i) {
    t.scale_dtype[i] = scales[i]->has_value() ? static_cast<int32_t>((*scales[i])->dtype) : -1;
    t.scale_numel[i] = scales[i]->has_value() ? TensorView(**scales[i]).numel() : 0;
  }
  t.key_head_size = key.dim(2);
  t.value_head_size = a.has_value ? TensorView(a.value).dim(2) : 0;
  t.key_layout = cache_layout(a.key_cache, a.cache_mode, false, key.dim(1), key.dim(2));
  if (a.has_value) t.value_layout = cache_layout(a.value_cache, a.cache_mode, true, key.dim(1), t.value_head_size);

  // A bit copy whose pairs differ in element size (an int8 key beside a float16 value) runs in
  // bytes: every count, stride and layout field times its pair's element size, elem_bytes 1.
  const int64_t value_elem = a.has_value ? static_cast<int64_t>(aop_dtype_size(a.value_cache.dtype)) : t.elem_bytes;
  if (t.quant == 0 && value_elem != t.elem_bytes) {
    in_bytes(t.key_row_elems, t.key_token_stride, t.key_layout, t.elem_bytes);
    in_bytes(t.value_row_elems, t.value_token_stride, t.value_layout, value_elem);
    t.elem_bytes = 1;
  }

  t.block_dim = static_cast<int32_t>(launch::cores_for_units(t.num_tokens, platform.aiv_cores));
  t.tokens_per_core = static_cast<int32_t>(t.num_tokens / t.block_dim);
  t.cores_with_extra = static_cast<int32_t>(t.num_tokens % t.block_dim);

  t.chan_groups = 1;
  if (t.quant != 0) {
    quant_tiling(t, platform);
    return t;
  }
  const int64_t row_bytes = std::max(t.key_row_elems, t.value_row_elems) * t.elem_bytes;
  const int64_t row_bursts = (row_bytes + kBurstAlign - 1) / kBurstAlign * kBurstAlign;
  int64_t buffer_bytes = (platform.ub_bytes - rac_check_ub_bytes(t.block_dim)) / kRacBufferNum / kBurstAlign * kBurstAlign;
  // A chunked layout (NZ) writes one DataCopyPad burst per 32-byte chunk: at most 4095 bursts per copy.
  if (t.key_layout.chunk_elems < t.key_layout.group_elems || t.value_layout.chunk_elems < t.value_layout.group_elems) buffer_bytes = std::min<int64_t>(buffer_bytes, kMaxBursts * kBurstAlign);
  t.chunk_elems = static_cast<int32_t>(std::max<int64_t>(kBurstAlign, std::min(row_bursts, buffer_bytes)) /
                                       t.elem_bytes);
  return t;
}

}  // namespace

ReshapeAndCacheTiling tiling(const Args& a, const aop_platform& platform) {
  KeyBuilder key("reshape_and_cache");
  key.add_int(a.cache_mode).add_bool(a.has_value).add_int(a.kv_cache_dtype).add_tensor(TensorView(a.key));
  for (const auto* s : {&a.k_scale, &a.v_scale, &a.k_offset, &a.v_offset}) {
    key.add_bool(s->has_value());
    if (s->has_value()) key.add_tensor(TensorView(**s));
  }
  if (a.has_value) key.add_tensor(TensorView(a.value)).add_tensor(TensorView(a.value_cache));
  key.add_tensor(TensorView(a.key_cache)).add_tensor(TensorView(a.slot_mapping)).add_platform(platform);
  return tiling_cache().get_or_compute_pod<ReshapeAndCacheTiling>(key, [&] { return compute(a, platform); });
}

}  // namespace aop::reshape_and_cache
