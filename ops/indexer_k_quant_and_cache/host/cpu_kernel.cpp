// The CPU backend: validate, check the data, then quantise token rows in parallel over tokens:
// widen the row to float32, one abs-max per group, the group scale, the codes straight into the
// cache (one pass over k, one over the written bytes).
#include <algorithm>
#include <cstring>
#include <vector>

#include "ascend_ops/parallel.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/indexer_k_quant_and_cache.h"
#include "host/quant_rules.h"
#include "host/rows.h"

// No contraction of a multiply and an add into an FMA anywhere here: every rounding is the contract's.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#endif

// The per-token work is built once per x86-64 level (v4: AVX-512; v3: AVX2 + F16C; the SSE2
// baseline) and chosen at load time; the same loops and roundings in each (IEEE division, no FMA).
// The tests run the level of the machine they run on.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define AOP_IKQ_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define AOP_IKQ_CLONES
#endif

namespace aop::indexer_k_quant_and_cache {
namespace {

// Below this many bytes of k per thread, waking workers costs more than the work.
constexpr int64_t kBytesPerThread = 128 * 1024;

struct Plan {
  Dims d;
  const char* k = nullptr;
  int64_t k_row_bytes = 0;  // bytes between tokens of k
  aop_dtype k_dtype = AOP_DTYPE_FLOAT32;
  char* cache = nullptr;
  char* scales = nullptr;   // split only
  bool scales_f16 = false;  // split: float16 scale cache
  bool ue8m0 = false;
};

// One token: the codes of its D elements and its G scales at `slot`.
// `row`: D float32 of scratch for the widened row, `y` another D.
AOP_IKQ_CLONES void quantize_token(const Plan& p, int64_t t, int64_t slot, float* row, float* y) {
  const Dims& d = p.d;
  rows::widen(p.k + t * p.k_row_bytes, p.k_dtype, d.head_dim, row);
  const int64_t block = slot / d.block_size, offset = slot % d.block_size;
  const int64_t qbs = d.quant_block;
  if (d.format == Format::kFused) {
    uint8_t* base = reinterpret_cast<uint8_t*>(p.cache) + block * d.cache_block_stride;
    uint8_t* codes = base + offset * d.head_dim;
    char* scale_at = reinterpret_cast<char*>(base + d.block_size * d.head_dim) + 4 * offset * d.groups;
    for (int64_t g = 0; g < d.groups; ++g) {
      const float* x = row + g * qbs;
      const float sc = rules::fp8_scale(rows::abs_max(x, qbs), p.ue8m0);
      for (int64_t i = 0; i < qbs; ++i) codes[g * qbs + i] = rules::e4m3fn_code(x[i] / sc);
      std::memcpy(scale_at + 4 * g, &sc, 4);
    }
    return;
  }
  int8_t* codes = reinterpret_cast<int8_t*>(p.cache) + block * d.cache_block_stride + offset * d.head_dim;
  const int64_t scale_index = block * d.scale_block_stride + offset * d.groups;
  for (int64_t g = 0; g < d.groups; ++g) {
    const float* x = row + g * qbs;
    const float sc = rules::int8_scale(rows::abs_max(x, qbs));
    rules::int8_codes(x, sc, qbs, codes + g * qbs, y);
    if (p.scales_f16) {
      reinterpret_cast<_Float16*>(p.scales)[scale_index + g] = static_cast<_Float16>(sc);  // nearest even
    } else {
      reinterpret_cast<float*>(p.scales)[scale_index + g] = sc;
    }
  }
}

template <typename S>
void quantize_tokens(const Plan& p, const S* slots) {
  const int64_t row_bytes = p.d.head_dim * static_cast<int64_t>(aop_dtype_size(p.k_dtype));
  const int64_t grain = std::max<int64_t>(1, kBytesPerThread / std::max<int64_t>(row_bytes, 1));
  parallel_for(p.d.written, grain, [&](int64_t begin, int64_t end) {
    std::vector<float> row(static_cast<size_t>(2 * p.d.head_dim));
    for (int64_t t = begin; t < end; ++t) {
      const int64_t slot = static_cast<int64_t>(slots[t]);
      if (slot < 0) continue;  // padding token
      quantize_token(p, t, slot, row.data(), row.data() + p.d.head_dim);
    }
  });
}

}  // namespace

void run_cpu(const Args& a) {
  const Dims d = validate(a);
  if (a.k.device.type != AOP_DEVICE_CPU) {
    throw aop::Error(AOP_VALUE_ERROR, "indexer_k_quant_and_cache: the cpu backend needs tensors on cpu, k is on " +
                                          device_string(a.k.device));
  }
  check_data(a, d);
  Plan p;
  p.d = d;
  p.k = static_cast<const char*>(a.k.data);
  p.k_dtype = a.k.dtype;
  p.k_row_bytes = d.k_row_stride * static_cast<int64_t>(aop_dtype_size(a.k.dtype));
  p.cache = static_cast<char*>(a.k_cache.data);
  if (a.k_scale_cache) {
    p.scales = static_cast<char*>(a.k_scale_cache->data);
    p.scales_f16 = a.k_scale_cache->dtype == AOP_DTYPE_FLOAT16;
  }
  p.ue8m0 = a.ue8m0;
  if (a.slot_mapping.dtype == AOP_DTYPE_INT64) {
    quantize_tokens(p, static_cast<const int64_t*>(a.slot_mapping.data));
  } else {
    quantize_tokens(p, static_cast<const int32_t*>(a.slot_mapping.data));
  }
}

}  // namespace aop::indexer_k_quant_and_cache
