// The CPU backend: validate, then two passes over the tokens, each in parallel over tokens. Pass 1
// checks the data and computes every group's scale into a small buffer (T' * G floats); only when
// it finds a problem does check_data run (in token order, for the first error's exception), so
// nothing is written on error. Pass 2 writes the codes and scales straight from k's bits (the
// row, already in cache from pass 1, widened in registers). Into a cache larger than the last-level
// cache (common's ascend_ops/cpu_stream.hpp) pass 2 writes a row's codes into a 64-byte-aligned
// buffer of the thread's own and streams them out (no read for ownership of the cache's lines).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "ascend_ops/cpu_stream.hpp"
#include "ascend_ops/parallel.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/indexer_k_quant_and_cache.h"
#include "host/int8_rows_x86.h"
#include "host/quant_rules.h"
#include "host/rows.h"

// No contraction of a multiply and an add into an FMA anywhere here: every rounding is the contract's.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#endif

// The per-token loops are built once per x86-64 level (v4: AVX-512; v3: AVX2 + F16C; the SSE2
// baseline) and chosen at load time; the same loops and roundings in each (IEEE division, no FMA).
// The split int8 codes mostly run the hand-vectorised kernels of int8_rows_x86.cpp instead (chosen
// by host/int8_rows_x86.h's isa(), which ASCEND_OPS_CPU_ISA caps; tests/test_ikq_isa.py runs each).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define AOP_IKQ_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define AOP_IKQ_CLONES
#endif

namespace aop::indexer_k_quant_and_cache {
namespace {

// Below this many bytes of k per thread, waking workers costs more than the work.
constexpr int64_t kBytesPerThread = 128 * 1024;
// Tokens ahead whose code row is prefetched for ordinary stores. Not for streaming stores: a
// prefetch for writing reads the line for ownership, the read streaming avoids, and the streaming
// store must then evict it (T = 4096 with 128-byte rows: 108 -> 83 µs fresh, 92 -> 68 same).
constexpr int64_t kPrefetchAhead = 4;

struct Plan {
  Dims d;
  const char* k = nullptr;
  int64_t k_row_bytes = 0;  // bytes between tokens of k
  char* cache = nullptr;
  char* scales = nullptr;   // split only
  bool scales_f16 = false;  // split: float16 scale cache
  bool check_scales = false;  // split, float16 scales, bfloat16 / float32 k: the overflow check
  bool ue8m0 = false;
  float* sc = nullptr;      // T' * G group scales, from pass 1
  x86::Int8Codes fast_int8 = nullptr;  // split: the hand-vectorised codes, or none
  x86::AbsMaxBits16 fast_amax16 = nullptr;  // bfloat16 / float16 k: the hand-vectorised abs-max, or none
  cpu_stream::CopyFn stream = nullptr;  // streaming stores for the code rows, or none (ordinary)

  // Where the codes of the token at `slot` go.
  uint8_t* codes_at(int64_t slot) const {
    const int64_t block = slot / d.block_size, offset = slot % d.block_size;
    return reinterpret_cast<uint8_t*>(cache) + block * d.cache_block_stride + offset * d.head_dim;
  }
};

// Pass 1 for one token: its G scales into sc; whether one overflows its float16 store.
template <class S>
AOP_IKQ_INLINE bool token_scales(const Plan& p, int64_t t, float* sc) {
  const Dims& d = p.d;
  const auto* s = reinterpret_cast<const typename S::Bits*>(p.k + t * p.k_row_bytes);
  bool overflow = false;
  for (int64_t g = 0; g < d.groups; ++g) {
    float amax;
    const int32_t bits = sizeof(typename S::Bits) == 2 && p.fast_amax16 != nullptr
                             ? p.fast_amax16(reinterpret_cast<const uint16_t*>(s + g * d.quant_block), d.quant_block)
                             : -1;
    if (bits >= 0) {
      amax = S::widen(static_cast<typename S::Bits>(bits));
    } else {
      amax = rows::abs_max<S>(s + g * d.quant_block, d.quant_block);
    }
    sc[g] = d.format == Format::kFused ? rules::fp8_scale(amax, p.ue8m0) : rules::int8_scale(amax);
    overflow |= p.check_scales && rules::float16_overflows(sc[g]);
  }
  return overflow;
}

// Pass 2 for one token: the codes of its D elements and its G scales at `slot`. `row`: D bytes of
// the thread's own, where the codes go first when they are streamed out.
template <class S>
AOP_IKQ_INLINE void token_codes(const Plan& p, int64_t t, int64_t slot, const float* sc, uint8_t* row) {
  const Dims& d = p.d;
  const auto* s = reinterpret_cast<const typename S::Bits*>(p.k + t * p.k_row_bytes);
  const int64_t block = slot / d.block_size, offset = slot % d.block_size;
  const int64_t qbs = d.quant_block;
  uint8_t* dst = p.codes_at(slot);
  uint8_t* out = p.stream != nullptr ? row : dst;
  if (d.format == Format::kFused) {
    uint8_t* base = reinterpret_cast<uint8_t*>(p.cache) + block * d.cache_block_stride;
    for (int64_t g = 0; g < d.groups; ++g) rules::e4m3fn_codes<S>(s + g * qbs, sc[g], qbs, out + g * qbs);
    if (p.stream != nullptr) p.stream(dst, row, static_cast<size_t>(d.head_dim));
    std::memcpy(base + d.block_size * d.head_dim + 4 * offset * d.groups, sc, 4 * d.groups);
    return;
  }
  int8_t* codes = reinterpret_cast<int8_t*>(out);
  for (int64_t g = 0; g < d.groups; ++g) {
    if (p.fast_int8 == nullptr || !p.fast_int8(s + g * qbs, sc[g], qbs, codes + g * qbs)) {
      rules::int8_codes<S>(s + g * qbs, sc[g], qbs, codes + g * qbs);
    }
  }
  if (p.stream != nullptr) p.stream(dst, row, static_cast<size_t>(d.head_dim));
  const int64_t scale_index = block * d.scale_block_stride + offset * d.groups;
  if (p.scales_f16) {
    _Float16* out = reinterpret_cast<_Float16*>(p.scales) + scale_index;
    for (int64_t g = 0; g < d.groups; ++g) out[g] = static_cast<_Float16>(sc[g]);  // nearest even
  } else {
    std::memcpy(reinterpret_cast<float*>(p.scales) + scale_index, sc, 4 * d.groups);
  }
}

// Pass 1 over tokens [begin, end): their scales; whether one of them has an out-of-range slot or
// an overflowing scale.
template <class S, class Slot>
AOP_IKQ_CLONES bool scales_range(const Plan& p, const Slot* slots, int64_t begin, int64_t end) {
  const int64_t num_slots = p.d.num_blocks * p.d.block_size;
  bool found = false;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t slot = static_cast<int64_t>(slots[t]);
    found |= slot >= num_slots;
    if (slot >= 0) found |= token_scales<S>(p, t, p.sc + t * p.d.groups);
  }
  return found;
}

// Pass 2 over tokens [begin, end); `row`: D bytes of the thread's own.
template <class S, class Slot>
AOP_IKQ_CLONES void codes_range(const Plan& p, const Slot* slots, int64_t begin, int64_t end, uint8_t* row) {
  for (int64_t t = begin; t < end; ++t) {
    if (p.stream == nullptr && t + kPrefetchAhead < end && slots[t + kPrefetchAhead] >= 0) {
      cpu_stream::prefetch_for_write(p.codes_at(static_cast<int64_t>(slots[t + kPrefetchAhead])));
    }
    const int64_t slot = static_cast<int64_t>(slots[t]);
    if (slot >= 0) token_codes<S>(p, t, slot, p.sc + t * p.d.groups, row);  // slot < 0: a padding token
  }
  if (p.stream != nullptr) cpu_stream::stream_fence();  // this thread's streaming stores, before it reports done
}

// Both passes; false (nothing written) when pass 1 found an out-of-range slot or an overflowing
// scale.
template <class S, class Slot>
bool quantize_tokens(const Plan& p, const Slot* slots) {
  const int64_t row_bytes = p.d.head_dim * static_cast<int64_t>(sizeof(typename S::Bits));
  const int64_t grain = std::max<int64_t>(1, kBytesPerThread / row_bytes);
  std::atomic<bool> bad{false};
  parallel_for(p.d.written, grain, [&](int64_t begin, int64_t end) {
    if (scales_range<S>(p, slots, begin, end)) bad.store(true, std::memory_order_relaxed);
  });
  if (bad.load()) return false;
  parallel_for(p.d.written, grain, [&](int64_t begin, int64_t end) {
    std::vector<uint8_t> row(p.stream != nullptr ? static_cast<size_t>(p.d.head_dim) : 0);
    codes_range<S>(p, slots, begin, end, row.data());
  });
  return true;
}

template <class S>
bool quantize(const Plan& p, const aop_tensor& slots) {
  return slots.dtype == AOP_DTYPE_INT64 ? quantize_tokens<S>(p, static_cast<const int64_t*>(slots.data))
                                        : quantize_tokens<S>(p, static_cast<const int32_t*>(slots.data));
}

}  // namespace

void run_cpu(const Args& a) {
  const Dims d = validate(a);
  if (a.k.device.type != AOP_DEVICE_CPU) {
    throw aop::Error(AOP_VALUE_ERROR, "indexer_k_quant_and_cache: the cpu backend needs tensors on cpu, k is on " +
                                          device_string(a.k.device));
  }
  std::vector<float> sc(static_cast<size_t>(d.written * d.groups));
  Plan p;
  p.d = d;
  p.k = static_cast<const char*>(a.k.data);
  p.k_row_bytes = d.k_row_stride * static_cast<int64_t>(aop_dtype_size(a.k.dtype));
  p.cache = static_cast<char*>(a.k_cache.data);
  if (a.k_scale_cache) {
    p.scales = static_cast<char*>(a.k_scale_cache->data);
    p.scales_f16 = a.k_scale_cache->dtype == AOP_DTYPE_FLOAT16;
  }
  p.check_scales = needs_scale_check(a, d);
  p.ue8m0 = a.ue8m0;
  p.sc = sc.data();
  if (d.format == Format::kSplit) p.fast_int8 = x86::int8_codes(x86::isa(), a.k.dtype);
  p.fast_amax16 = x86::abs_max_bits16(x86::isa());
  const size_t cache_span = TensorView(a.k_cache).span_bytes() + (a.k_scale_cache ? TensorView(*a.k_scale_cache).span_bytes() : 0);
  if (cpu_stream::stream_rows(static_cast<int64_t>(cache_span))) p.stream = cpu_stream::streaming().copy;
  const bool written = a.k.dtype == AOP_DTYPE_BFLOAT16 ? quantize<rows::Bf16>(p, a.slot_mapping)
                       : a.k.dtype == AOP_DTYPE_FLOAT16 ? quantize<rows::F16>(p, a.slot_mapping)
                                                        : quantize<rows::F32>(p, a.slot_mapping);
  if (!written) {
    check_data(a, d);  // throws the first error in token order
    throw aop::Error(AOP_RUNTIME_ERROR, "indexer_k_quant_and_cache: internal: the cpu kernel's data check found an "
                                        "error that check_data did not");
  }
}

}  // namespace aop::indexer_k_quant_and_cache
