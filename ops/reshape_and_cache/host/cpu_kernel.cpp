// The CPU backend: validate, check the data, then copy rows in parallel over tokens, addressed by
// the cache's layout descriptor (host/cache_layout.h): one memcpy per row when the row lands in one
// piece (contiguous ND), else one per contiguous chunk (a head of a strided / head-major cache, a
// 32-byte NZ fractal row, vLLM's x-wide key chunks). A quantising mode writes each row's codes
// (host/quantize.h) instead: straight into a one-piece row, else through a row buffer.
#include <algorithm>
#include <cstring>
#include <vector>

#include "ascend_ops/parallel.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/cache_layout.h"
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
  int64_t row_elems = 0;        // H * D
  int64_t elem = 1;             // bytes of a cache element
  RacCacheLayout layout{};      // where the cache keeps a row (host/cache_layout.h)
  const QuantPlan* quant = nullptr;  // a quantising mode: one code byte per element

  // The row lands in one piece (a contiguous ND row at slot * row): no staging.
  bool whole() const { return layout.group_elems == row_elems && layout.chunk_elems == row_elems; }

  // Writes token t's row at `slot`: its G-element groups, each in F-element chunks, where the
  // layout puts them. `scratch`: row_elems bytes of the calling thread's own (a quantising
  // write's codes when the row does not land in one piece).
  void write(int64_t t, int64_t slot, uint8_t* scratch) const {
    const char* from = src + t * src_token_bytes;
    char* base = dst + layout_offset(layout, slot, 0) * elem;
    if (quant != nullptr) {
      uint8_t* codes = whole() ? reinterpret_cast<uint8_t*>(base) : scratch;
      quantize_row(*quant, from, codes, row_elems);
      if (whole()) return;
      from = reinterpret_cast<const char*>(codes);
    }
    if (whole()) {
      std::memcpy(base, from, row_elems * elem);
      return;
    }
    const int64_t f = layout.chunk_elems, chunks = layout.group_elems / f;
    for (int64_t g = 0, j = 0; j < row_elems; ++g) {
      char* group = base + g * layout.group_stride * elem;
      for (int64_t c = 0; c < chunks; ++c, j += f) {
        std::memcpy(group + c * layout.chunk_stride * elem, from + j * elem, f * elem);
      }
    }
  }
};

RowCopy row_copy(const aop_tensor& src, const aop_tensor& cache, const RacCacheLayout& layout,
                 const QuantPlan* quant) {
  const TensorView s(src);
  const int64_t elem = static_cast<int64_t>(aop_dtype_size(src.dtype));
  const int64_t row = s.dim(1) * s.dim(2);
  RowCopy c;
  c.src = static_cast<const char*>(src.data);
  c.dst = static_cast<char*>(cache.data);
  c.src_token_bytes = (s.dim(0) > 1 ? s.stride(0) : row) * elem;
  c.row_elems = row;
  c.elem = static_cast<int64_t>(aop_dtype_size(cache.dtype));
  c.layout = layout;
  c.quant = quant;
  return c;
}

template <typename S>
void copy_tokens(const S* slots, int64_t count, const RowCopy& k, const RowCopy* v) {
  const int64_t bytes_per_token = k.row_elems * k.elem + (v ? v->row_elems * v->elem : 0);
  const int64_t grain = std::max<int64_t>(1, kBytesPerThread / std::max<int64_t>(bytes_per_token, 1));
  const bool scratch = k.quant != nullptr && (!k.whole() || (v && !v->whole()));
  parallel_for(count, grain, [&](int64_t begin, int64_t end) {
    std::vector<uint8_t> row(scratch ? static_cast<size_t>(std::max(k.row_elems, v ? v->row_elems : 0)) : 0);
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
  const TensorView key(a.key);
  const RowCopy k = row_copy(a.key, a.key_cache, cache_layout(a.key_cache, a.cache_mode, false, key.dim(1), key.dim(2)),
                             quant ? &kq : nullptr);
  const RowCopy v = a.has_value ? row_copy(a.value, a.value_cache,
                                           cache_layout(a.value_cache, a.cache_mode, true, key.dim(1),
                                                        TensorView(a.value).dim(2)),
                                           quant ? &vq : nullptr)
                                : RowCopy{};
  const RowCopy* vp = a.has_value ? &v : nullptr;  // key-only: no value cache
  const int64_t count = a.slot_mapping.shape[0];
  if (a.slot_mapping.dtype == AOP_DTYPE_INT64) {
    copy_tokens(static_cast<const int64_t*>(a.slot_mapping.data), count, k, vp);
  } else {
    copy_tokens(static_cast<const int32_t*>(a.slot_mapping.data), count, k, vp);
  }
}

}  // namespace aop::reshape_and_cache
