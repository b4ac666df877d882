// The cache layouts of reshape_and_cache: shapes of the head-major and vLLM paged modes, the
// stride rules of every mode, the one descriptor they map to, and the overlap checks.
#include "host/cache_layout.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "host/checks.h"

namespace aop::reshape_and_cache {
namespace {

using checks::fail;

// The dims of a cache in its mode: -1 when the mode has no such dim.
struct Dims {
  int block, slot, head, chunk, elem;
};

Dims dims_of(int32_t mode, bool value) {
  switch (mode) {
    case kCacheNZ: return {0, 2, -1, 1, 3};
    case kCacheHeadMajor: return {0, 2, 1, -1, 3};
    case kCachePaged: return value ? Dims{0, 3, 1, 2, -1} : Dims{0, 3, 1, 2, 4};
    default: return {0, 1, 2, -1, 3};
  }
}

const char* layout_name(int32_t mode, bool value) {
  switch (mode) {
    case kCacheNZ: return value ? "[num_blocks, H*Dv/F, block_size, F]" : "[num_blocks, H*Dk/F, block_size, F]";
    case kCacheHeadMajor: return value ? "[num_blocks, H, block_size, Dv]" : "[num_blocks, H, block_size, Dk]";
    case kCachePaged: return value ? "[num_blocks, H, Dv, block_size]" : "[num_blocks, H, Dk/x, block_size, x]";
    default: return value ? "[num_blocks, block_size, H, Dv]" : "[num_blocks, block_size, H, Dk]";
  }
}

[[noreturn]] void shape_fail(const char* name, const TensorView& t, const std::string& layout, const std::string& what) {
  fail(AOP_VALUE_ERROR, std::string(name) + " should be " + layout + " but has shape " + t.shape_string() +
                            (what.empty() ? "" : " (" + what + ")"));
}

// One past the last element of `t` with dim 0 taken as size 1 (a block's extent), in elements.
int64_t block_extent(const TensorView& t) {
  int64_t last = 0;
  for (int i = 1; i < t.ndim(); ++i) last += (t.dim(i) - 1) * t.stride(i);
  return last + 1;
}

struct Span {
  uintptr_t begin = 0, end = 0;
};
Span span_of(const TensorView& t) {
  const auto begin = reinterpret_cast<uintptr_t>(t.data());
  return {begin, begin + t.span_bytes()};
}

// Above this many elements the exact byte-by-byte check is not run: views whose byte ranges
// intersect are then refused as possibly sharing bytes.
constexpr int64_t kExactCheckElems = int64_t{1} << 24;

// Marks the bytes of `t` that fall in [lo, hi) in `mask` (one flag per byte from lo).
void mark(const TensorView& t, uintptr_t lo, uintptr_t hi, std::vector<uint8_t>& mask, bool* hit, bool set) {
  const int n = t.ndim();
  const int64_t elem = static_cast<int64_t>(aop_dtype_size(t.dtype()));
  std::vector<int64_t> idx(static_cast<size_t>(n), 0);
  const auto base = reinterpret_cast<uintptr_t>(t.data());
  const int64_t count = t.numel();
  for (int64_t e = 0; e < count; ++e) {
    int64_t off = 0;
    for (int i = 0; i < n; ++i) off += idx[static_cast<size_t>(i)] * t.stride(i);
    const uintptr_t p = base + static_cast<uintptr_t>(off * elem);
    for (int64_t k = 0; k < elem; ++k) {
      const uintptr_t q = p + static_cast<uintptr_t>(k);
      if (q < lo || q >= hi) continue;
      uint8_t& m = mask[q - lo];
      if (set) {
        m = 1;
      } else if (m != 0) {
        *hit = true;
        return;
      }
    }
    for (int i = n - 1; i >= 0; --i) {
      if (++idx[static_cast<size_t>(i)] < t.dim(i)) break;
      idx[static_cast<size_t>(i)] = 0;
    }
  }
}

// 0: disjoint; 1: share a byte; 2: byte ranges intersect, too large to check exactly.
int share(const TensorView& a, const TensorView& b) {
  if (a.numel() == 0 || b.numel() == 0) return 0;
  const Span sa = span_of(a), sb = span_of(b);
  const uintptr_t lo = std::max(sa.begin, sb.begin), hi = std::min(sa.end, sb.end);
  if (lo >= hi) return 0;
  if (a.numel() > kExactCheckElems || b.numel() > kExactCheckElems) return 2;
  std::vector<uint8_t> mask(hi - lo, 0);
  bool hit = false;
  mark(a, lo, hi, mask, &hit, true);
  mark(b, lo, hi, mask, &hit, false);
  return hit ? 1 : 0;
}

// Two caches with the same block stride that split each block between them (vLLM's
// [num_blocks, 2, ...] allocation and its permutations): disjoint when, modulo the block stride,
// one block of each fits beside the other.
bool blocks_interleave(const TensorView& k, const TensorView& v) {
  if (k.ndim() < 1 || v.ndim() < 1 || k.dim(0) != v.dim(0) || k.stride(0) != v.stride(0)) return false;
  const int64_t elem = static_cast<int64_t>(aop_dtype_size(k.dtype()));
  if (elem != static_cast<int64_t>(aop_dtype_size(v.dtype()))) return false;
  const int64_t period = k.stride(0) * elem;
  const int64_t ek = block_extent(k) * elem, ev = block_extent(v) * elem;
  if (period <= 0 || ek + ev > period) return false;
  const int64_t diff = static_cast<int64_t>(reinterpret_cast<uintptr_t>(v.data()) - reinterpret_cast<uintptr_t>(k.data()));
  const int64_t r = ((diff % period) + period) % period;
  return r >= ek && r + ev <= period;
}

void expect_apart(const char* a_name, const aop_tensor& a, const char* b_name, const aop_tensor& b) {
  const TensorView va(a), vb(b);
  const int verdict = share(va, vb);
  if (verdict == 0) return;
  if (verdict == 1) {
    fail(AOP_VALUE_ERROR, std::string(a_name) + " and " + b_name + " should not share memory (the caches are written "
                              "in place) but they overlap: " + a_name + " has shape " + va.shape_string() +
                              " and strides " + va.strides_string() + ", " + b_name + " has shape " +
                              vb.shape_string() + " and strides " + vb.strides_string());
  }
  fail(AOP_VALUE_ERROR, std::string(a_name) + " and " + b_name + " should not share memory but their byte ranges "
                            "intersect and they are too large (> " + std::to_string(kExactCheckElems) +
                            " elements) to prove them disjoint; pass separate allocations or views that split "
                            "each cache block");
}

bool on_host_memory(const aop_tensor& t) { return t.device.type != AOP_DEVICE_META && t.data != nullptr; }

}  // namespace

int64_t cache_row_elems(const aop_tensor& cache, int32_t mode, bool value) {
  const int rank = mode == kCachePaged && !value ? 5 : 4;
  if (cache.ndim != rank || mode < kCacheND || mode > kCachePaged) return 0;
  const Dims dm = dims_of(mode, value);
  int64_t row = 1;
  for (int i = 0; i < rank; ++i) {
    if (i != dm.block && i != dm.slot) row *= cache.shape[i];
  }
  return row;
}

void expect_extra_mode_shape(const Args& a, bool value, int64_t heads, int64_t d) {
  const char* name = value ? "value_cache" : "key_cache";
  const aop_tensor& cache = value ? a.value_cache : a.key_cache;
  const TensorView c(cache);
  const std::string layout = std::string(layout_name(a.cache_mode, value)) +
                             (a.cache_mode == kCacheHeadMajor ? " (cache_mode 2, head-major ND)"
                                                              : " (cache_mode 3, vLLM paged)");
  const int rank = a.cache_mode == kCachePaged && !value ? 5 : 4;
  if (c.ndim() != rank) shape_fail(name, c, layout, "rank " + std::to_string(rank));
  const Dims dm = dims_of(a.cache_mode, value);
  if (c.dim(dm.head) != heads) shape_fail(name, c, layout, "H = " + std::to_string(heads) + " from key");
  if (a.cache_mode == kCacheHeadMajor) {
    if (c.dim(3) != d) shape_fail(name, c, layout, std::string(value ? "Dv" : "Dk") + " = " + std::to_string(d));
  } else if (value) {
    if (c.dim(2) != d) shape_fail(name, c, layout, "Dv = " + std::to_string(d) + " from value");
  } else {
    const int64_t x = kPagedChunkBytes / static_cast<int64_t>(aop_dtype_size(cache.dtype));
    if (c.dim(4) != x) {
      shape_fail(name, c, layout, "x = 16 bytes / itemsize = " + std::to_string(x) + " for " +
                                      aop_dtype_name(cache.dtype));
    }
    if (d % x != 0) {
      fail(AOP_VALUE_ERROR, "cache_mode 3 (vLLM paged) needs the head size Dk = " + std::to_string(d) +
                                " to be a multiple of x = " + std::to_string(x) + " (16 bytes of " +
                                aop_dtype_name(cache.dtype) + ")");
    }
    if (c.dim(2) != d / x) shape_fail(name, c, layout, "Dk/x = " + std::to_string(d / x));
  }
  if (value) {
    const TensorView k(a.key_cache);
    const Dims kd = dims_of(a.cache_mode, false);
    if (c.dim(0) != k.dim(0)) shape_fail(name, c, layout, "num_blocks = " + std::to_string(k.dim(0)) + " from key_cache");
    if (c.dim(dm.slot) != k.dim(kd.slot)) {
      shape_fail(name, c, layout, "block_size = " + std::to_string(k.dim(kd.slot)) + " from key_cache");
    }
  }
}

void expect_cache_strides(const char* name, const aop_tensor& cache, int32_t mode, bool value) {
  const TensorView c(cache);
  if (c.numel() == 0) return;
  const Dims dm = dims_of(mode, value);
  for (int i = 0; i < c.ndim(); ++i) {
    if (c.stride(i) < 0) {
      fail(AOP_VALUE_ERROR, std::string(name) + " should have non-negative strides but has strides " +
                                c.strides_string());
    }
  }
  if (dm.elem >= 0 && c.dim(dm.elem) > 1 && c.stride(dm.elem) != 1) {
    fail(AOP_VALUE_ERROR, std::string(name) + " should be contiguous in its last dim (stride 1: each head's row of "
                              "a token, or each chunk of it, contiguous; " + layout_name(mode, value) +
                              ", other strides free) but has shape " + c.shape_string() + " and strides " +
                              c.strides_string());
  }
  // No two index tuples on one element: sorted by stride, each dim's stride clears the extent
  // of the dims inside it (sizes 1 place no constraint).
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size)
  for (int i = 0; i < c.ndim(); ++i) {
    if (c.dim(i) > 1) dims.emplace_back(c.stride(i), c.dim(i));
  }
  std::sort(dims.begin(), dims.end());
  int64_t extent = 1;
  for (const auto& [stride, size] : dims) {
    if (stride < extent) {
      fail(AOP_VALUE_ERROR, std::string(name) + " should not repeat elements (it is written in place: every slot, "
                                "head and element its own memory) but shape " + c.shape_string() +
                                " with strides " + c.strides_string() + " overlaps itself");
    }
    extent = stride * (size - 1) + extent;
  }
}

RacCacheLayout cache_layout(const aop_tensor& cache, int32_t mode, bool value, int64_t heads, int64_t d) {
  const TensorView c(cache);
  const Dims dm = dims_of(mode, value);
  RacCacheLayout l{};
  l.block_size = c.dim(dm.slot);
  l.block_stride = c.stride(dm.block);
  l.slot_stride = c.stride(dm.slot);
  l.group_elems = d;
  int64_t f = d;
  if (mode == kCacheNZ) f = nz_fractal(static_cast<int64_t>(aop_dtype_size(cache.dtype)));
  if (mode == kCachePaged) f = value ? 1 : c.dim(4);
  l.chunk_elems = std::max<int64_t>(f, 1);
  l.chunk_stride = dm.chunk >= 0 ? c.stride(dm.chunk) : l.chunk_elems;
  // NZ has no head dim: head h starts D/F chunks after head h-1.
  l.group_stride = dm.head >= 0 ? c.stride(dm.head) : (d / l.chunk_elems) * l.chunk_stride;
  if (d == 0) {
    l.group_elems = l.chunk_elems = 1;
    l.chunk_stride = l.group_stride = 1;
  }
  // Chunks that follow each other make one chunk; heads that follow each other make one group.
  if (l.chunk_elems < l.group_elems && (l.chunk_stride == l.chunk_elems || l.group_elems / l.chunk_elems == 1)) {
    l.chunk_elems = l.group_elems;
  }
  if (l.chunk_elems == l.group_elems) l.chunk_stride = l.chunk_elems;
  const bool one_chunk = l.chunk_elems == l.group_elems;
  const int64_t packed = one_chunk ? l.group_elems : (l.group_elems / l.chunk_elems) * l.chunk_stride;
  if (heads <= 1 || l.group_stride == packed) {
    l.group_elems *= std::max<int64_t>(heads, 1);
    if (one_chunk) l.chunk_elems = l.chunk_stride = l.group_elems;
    l.group_stride = l.group_elems / l.chunk_elems * l.chunk_stride;
  }
  l.span_elems = c.numel() == 0 ? 0 : static_cast<int64_t>(c.span_bytes() / aop_dtype_size(cache.dtype));
  return l;
}

void expect_no_overlap(const Args& a) {
  if (!on_host_memory(a.key_cache)) return;
  const bool kv = a.has_value;
  if (kv && on_host_memory(a.value_cache) && !blocks_interleave(TensorView(a.key_cache), TensorView(a.value_cache))) {
    expect_apart("key_cache", a.key_cache, "value_cache", a.value_cache);
  }
  std::vector<std::pair<const char*, const aop_tensor*>> inputs = {{"key", &a.key}, {"slot_mapping", &a.slot_mapping}};
  if (kv) inputs.emplace_back("value", &a.value);
  const std::pair<const char*, const std::optional<aop_tensor>*> scales[] = {
      {"k_scale", &a.k_scale}, {"v_scale", &a.v_scale}, {"k_offset", &a.k_offset}, {"v_offset", &a.v_offset}};
  for (const auto& [name, t] : scales) {
    if (t->has_value()) inputs.emplace_back(name, &**t);
  }
  for (const auto& [name, t] : inputs) {
    if (!on_host_memory(*t)) continue;
    expect_apart("key_cache", a.key_cache, name, *t);
    if (kv && on_host_memory(a.value_cache)) expect_apart("value_cache", a.value_cache, name, *t);
  }
}

}  // namespace aop::reshape_and_cache
