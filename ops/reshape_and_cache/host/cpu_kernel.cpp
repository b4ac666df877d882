// The CPU backend: validate, check the data, then copy rows in parallel over tokens, addressed by
// the cache's layout descriptor (host/cache_layout.h): one copy per row when the row lands in one
// piece (contiguous ND), else one per contiguous chunk (a head of a strided / head-major cache, a
// 32-byte NZ fractal row, vLLM's x-wide key chunks). A quantising mode writes each row's codes
// (host/quantize.h) instead: straight into a one-piece row, else through a row buffer.
//
// Stores: into caches that together span more than the last-level cache, rows and chunks of at
// least a 64-byte line are written with streaming stores (common's ascend_ops/cpu_stream.hpp: the
// rule, the per-ISA builds, ASCEND_OPS_CPU_STREAM); smaller caches take ordinary stores. A
// quantising mode then writes its codes into the row buffer and streams them out.
#include <algorithm>
#include <cstring>
#include <vector>

#include "ascend_ops/cpu_stream.hpp"
#include "ascend_ops/parallel.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/cache_layout.h"
#include "host/quantize.h"
#include "host/reshape_and_cache.h"

namespace aop::reshape_and_cache {
namespace {

// Below this many bytes per thread, waking workers costs more than the copy.
constexpr int64_t kBytesPerThread = 256 * 1024;
// Tokens ahead whose destination line is prefetched (its page translation, and for ordinary
// stores the line): measured with scattered 2 KiB rows, 2-4 ahead cut a row's time by 25-40%.
constexpr int64_t kPrefetchAhead = 4;
// Chunks shorter than this hold no whole 64-byte line: always ordinary stores.
constexpr int64_t kLineBytes = 64;

struct RowCopy {
  const char* src = nullptr;
  char* dst = nullptr;
  int64_t src_token_bytes = 0;  // bytes between consecutive tokens of the source
  int64_t row_elems = 0;        // H * D
  int64_t elem = 1;             // bytes of a cache element
  RacCacheLayout layout{};      // where the cache keeps a row (host/cache_layout.h)
  const QuantPlan* quant = nullptr;  // a quantising mode: one code byte per element
  // Streaming stores for rows and chunks of at least a line (cpu_stream::streaming()), else null.
  cpu_stream::CopyFn stream = nullptr;

  // The row lands in one piece (a contiguous ND row at slot * row).
  bool whole() const { return layout.group_elems == row_elems && layout.chunk_elems == row_elems; }
  // A quantising write needs the row buffer: its codes go there first, unless they can be
  // written straight into a one-piece row with ordinary stores.
  bool needs_scratch() const { return quant != nullptr && (!whole() || stream != nullptr); }

  // Where token t's row starts at `slot`.
  char* row_at(int64_t slot) const { return dst + layout_offset(layout, slot, 0) * elem; }

  // Writes token t's row at `slot`: its G-element groups, each in F-element chunks, where the
  // layout puts them. `scratch`: row_elems bytes of the calling thread's own (a quantising
  // write's codes when needs_scratch()).
  void write(int64_t t, int64_t slot, uint8_t* scratch) const {
    const char* from = src + t * src_token_bytes;
    char* base = row_at(slot);
    if (quant != nullptr) {
      if (!needs_scratch()) {
        quantize_row(*quant, from, reinterpret_cast<uint8_t*>(base), row_elems);
        return;
      }
      quantize_row(*quant, from, scratch, row_elems);
      from = reinterpret_cast<const char*>(scratch);
    }
    if (whole()) {
      put(base, from, row_elems * elem);
      return;
    }
    const int64_t f = layout.chunk_elems, chunks = layout.group_elems / f;
    for (int64_t g = 0, j = 0; j < row_elems; ++g) {
      char* group = base + g * layout.group_stride * elem;
      for (int64_t c = 0; c < chunks; ++c, j += f) put(group + c * layout.chunk_stride * elem, from + j * elem, f * elem);
    }
  }

  void put(char* to, const char* from, int64_t bytes) const {
    if (stream != nullptr && bytes >= kLineBytes) {
      stream(to, from, static_cast<size_t>(bytes));
    } else {
      std::memcpy(to, from, static_cast<size_t>(bytes));
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
  const bool scratch = k.needs_scratch() || (v && v->needs_scratch());
  const bool streamed = k.stream != nullptr;
  parallel_for(count, grain, [&](int64_t begin, int64_t end) {
    std::vector<uint8_t> row(scratch ? static_cast<size_t>(std::max(k.row_elems, v ? v->row_elems : 0)) : 0);
    for (int64_t t = begin; t < end; ++t) {
      if (t + kPrefetchAhead < end) {
        const int64_t ahead = static_cast<int64_t>(slots[t + kPrefetchAhead]);
        if (ahead >= 0) {
          cpu_stream::prefetch_for_write(k.row_at(ahead));
          if (v) cpu_stream::prefetch_for_write(v->row_at(ahead));
        }
      }
      const int64_t slot = static_cast<int64_t>(slots[t]);
      if (slot < 0) continue;  // padding token
      k.write(t, slot, row.data());
      if (v) v->write(t, slot, row.data());
    }
    if (streamed) cpu_stream::stream_fence();  // this thread's streaming stores, before it reports done
  });
}

// The caches' byte spans in all (the key and value halves of one allocation count twice).
int64_t span_bytes(const Args& a) {
  const size_t bytes = TensorView(a.key_cache).span_bytes() + (a.has_value ? TensorView(a.value_cache).span_bytes() : 0);
  return static_cast<int64_t>(bytes);
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
  RowCopy k = row_copy(a.key, a.key_cache, cache_layout(a.key_cache, a.cache_mode, false, key.dim(1), key.dim(2)),
                             quant ? &kq : nullptr);
  RowCopy v = a.has_value ? row_copy(a.value, a.value_cache,
                                           cache_layout(a.value_cache, a.cache_mode, true, key.dim(1),
                                                        TensorView(a.value).dim(2)),
                                           quant ? &vq : nullptr)
                                : RowCopy{};
  RowCopy* vp = a.has_value ? &v : nullptr;  // key-only: no value cache
  if (cpu_stream::stream_rows(span_bytes(a))) {
    k.stream = cpu_stream::streaming().copy;
    if (vp) vp->stream = k.stream;
  }
  const int64_t count = a.slot_mapping.shape[0];
  if (a.slot_mapping.dtype == AOP_DTYPE_INT64) {
    copy_tokens(static_cast<const int64_t*>(a.slot_mapping.data), count, k, vp);
  } else {
    copy_tokens(static_cast<const int32_t*>(a.slot_mapping.data), count, k, vp);
  }
}

}  // namespace aop::reshape_and_cache
