// The CPU backend: validate, check the data, then copy rows in parallel over tokens (ND: one
// memcpy per row; NZ: one per 32-byte fractal row). A quantising mode writes each row's codes
// (host/quantize.h) instead: straight into an ND cache, through a row buffer into NZ.
#include <algorithm>
#include <cstring>
#include <vector>

#include "ascend_ops/parallel.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/quantize.h"
#include "host/reshape_and_cache.h"

namespace aop::reshape_and_cache {
namespace {

// Below this many bytes per thread, waking workers costs more than the copy.
constexpr int64_t kBytesPerThread = 256 * 1024;

struct RowCopy {
  const char* src = nullptr;
  char* dst = nullptr;
  int64_t src_token_bytes = 0;  // bytes between consecutive tokens of the source
  int64_t row_bytes = 0;        // bytes of one token's row in the cache (H * D elements)
  int64_t block_size = 1;
  bool nz = false;              // FRACTAL_NZ cache: the row goes in 32-byte fractal rows
  const QuantPlan* quant = nullptr;  // a quantising mode: one code byte per element

  // Writes token t's row at `slot`:
  //   ND: the row_bytes at slot * row_bytes;
  //   NZ: fractal row c (bytes [32c, 32c + 32) of the row) of block b = slot / block_size,
  //       offset o = slot % block_size at ((b * row_bytes / 32 + c) * block_size + o) * 32.
  // `scratch`: row_bytes of the calling thread's own (an NZ quantising write's codes).
  void write(int64_t t, int64_t slot, uint8_t* scratch) const {
    const char* from = src + t * src_token_bytes;
    if (quant != nullptr) {
      uint8_t* codes = nz ? scratch : reinterpret_cast<uint8_t*>(dst + slot * row_bytes);
      quantize_row(*quant, from, codes, row_bytes);
      if (!nz) return;
      from = reinterpret_cast<const char*>(codes);
    }
    if (!nz) {
      std::memcpy(dst + slot * row_bytes, from, row_bytes);
      return;
    }
    constexpr int64_t kFractalBytes = 32;
    const int64_t fractals = row_bytes / kFractalBytes;
    const int64_t block = slot / block_size, offset = slot % block_size;
    char* base = dst + (block * fractals * block_size + offset) * kFractalBytes;
    for (int64_t c = 0; c < fractals; ++c) {
      std::memcpy(base + c * block_size * kFractalBytes, from + c * kFractalBytes, kFractalBytes);
    }
  }
};

RowCopy row_copy(const Args& a, const aop_tensor& src, const aop_tensor& cache, const QuantPlan* quant) {
  const TensorView s(src);
  const int64_t elem = static_cast<int64_t>(aop_dtype_size(src.dtype));
  const int64_t row = s.dim(1) * s.dim(2);
  RowCopy c;
  c.src = static_cast<const char*>(src.data);
  c.dst = static_cast<char*>(cache.data);
  c.src_token_bytes = (s.dim(0) > 1 ? s.stride(0) : row) * elem;
  c.row_bytes = row * static_cast<int64_t>(aop_dtype_size(cache.dtype));
  c.quant = quant;
  c.block_size = cache_block_size(a);
  c.nz = a.cache_mode == kCacheNZ;
  return c;
}

template <typename S>
void copy_tokens(const S* slots, int64_t count, const RowCopy& k, const RowCopy* v) {
  const int64_t bytes_per_token = k.row_bytes + (v ? v->row_bytes : 0);
  const int64_t grain = std::max<int64_t>(1, kBytesPerThread / std::max<int64_t>(bytes_per_token, 1));
  const bool scratch = k.quant != nullptr && k.nz;
  parallel_for(count, grain, [&](int64_t begin, int64_t end) {
    std::vector<uint8_t> row(scratch ? static_cast<size_t>(std::max(k.row_bytes, v ? v->row_bytes : 0)) : 0);
    for (int64_t t = begin; t < end; ++t) {
      const int64_t slot = static_cast<int64_t>(slots[t]);
      if (slot < 0) continue;  // padding token
      k.write(t, slot, row.data());
      if (v) v->write(t, slot, row.data());
    }
  });
}

}  // namespace

void run_cpu(const Args& args) {
  const Args a = validated(args);
  if (a.key.device.type != AOP_DEVICE_CPU) {
    throw aop::Error(AOP_VALUE_ERROR, "reshape_and_cache: the cpu backend needs tensors on cpu, key is on " +
                                          device_string(a.key.device));
  }
  check_data(a);
  QuantPlan kq, vq;  // the quantising modes' per-channel scales and offsets
  const bool quant = quantized(a.kv_cache_dtype);
  if (quant) {
    const TensorView key(a.key);
    kq = quant_plan(a.kv_cache_dtype, a.key.dtype, *a.k_scale, a.k_offset ? &*a.k_offset : nullptr, key.dim(1),
                    key.dim(2));
    if (a.has_value) {
      vq = quant_plan(a.kv_cache_dtype, a.value.dtype, *a.v_scale, a.v_offset ? &*a.v_offset : nullptr, key.dim(1),
                      TensorView(a.value).dim(2));
    }
  }
  const RowCopy k = row_copy(a, a.key, a.key_cache, quant ? &kq : nullptr);
  const RowCopy v = a.has_value ? row_copy(a, a.value, a.value_cache, quant ? &vq : nullptr) : RowCopy{};
  const RowCopy* vp = a.has_value ? &v : nullptr;  // key-only: no value cache
  const int64_t count = a.slot_mapping.shape[0];
  if (a.slot_mapping.dtype == AOP_DTYPE_INT64) {
    copy_tokens(static_cast<const int64_t*>(a.slot_mapping.data), count, k, vp);
  } else {
    copy_tokens(static_cast<const int32_t*>(a.slot_mapping.data), count, k, vp);
  }
}

}  // namespace aop::reshape_and_cache
