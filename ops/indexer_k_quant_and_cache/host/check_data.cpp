// The data checks (slots, float16 scale overflow) and the messages of their errors, which the
// kernel's error record reproduces.
#include <cstdio>
#include <cstring>
#include <string>

#include "ascend_ops/tensor.hpp"
#include "host/indexer_k_quant_and_cache.h"
#include "host/quant_rules.h"
#include "host/rows.h"

// The row scan built per x86-64 level, as the CPU kernel's (host/cpu_kernel.cpp).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define AOP_IKQ_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define AOP_IKQ_CLONES
#endif

namespace aop::indexer_k_quant_and_cache {
namespace {

// The first group of a token's row whose float16 scale overflows, or -1 (its amax in *amax).
template <class S>
AOP_IKQ_CLONES int64_t first_overflow(const void* src, const Dims& d, float* amax) {
  const auto* s = static_cast<const typename S::Bits*>(src);
  for (int64_t g = 0; g < d.groups; ++g) {
    *amax = rows::abs_max<S>(s + g * d.quant_block, d.quant_block);
    if (rules::float16_overflows(rules::int8_scale(*amax))) return g;
  }
  return -1;
}

int64_t first_overflow(const void* src, aop_dtype dtype, const Dims& d, float* amax) {
  return dtype == AOP_DTYPE_BFLOAT16 ? first_overflow<rows::Bf16>(src, d, amax)
         : dtype == AOP_DTYPE_FLOAT16 ? first_overflow<rows::F16>(src, d, amax)
                                      : first_overflow<rows::F32>(src, d, amax);
}

constexpr const char* kOp = "indexer_k_quant_and_cache";

int64_t slot_at(const aop_tensor& slots, int64_t t) {
  return slots.dtype == AOP_DTYPE_INT64 ? static_cast<const int64_t*>(slots.data)[t]
                                        : static_cast<const int32_t*>(slots.data)[t];
}

std::string float_string(int64_t bits) {
  const float x = rules::float_of(static_cast<uint32_t>(bits));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(x));
  return buf;
}

}  // namespace

bool needs_scale_check(const Args& a, const Dims& d) {
  return d.format == Format::kSplit && a.k_scale_cache->dtype == AOP_DTYPE_FLOAT16 && a.k.dtype != AOP_DTYPE_FLOAT16;
}

void check_data(const Args& a, const Dims& d) {
  const int64_t num_slots = d.num_blocks * d.block_size;
  const bool scales = needs_scale_check(a, d);
  const int64_t elem = static_cast<int64_t>(aop_dtype_size(a.k.dtype));
  for (int64_t t = 0; t < d.written; ++t) {
    const int64_t slot = slot_at(a.slot_mapping, t);
    if (slot >= num_slots) {
      const int64_t record[kIkqCheckWords] = {kIkqSlotOutOfRange, t, slot, 0, d.num_blocks, d.block_size, 0, 0};
      throw kernel_error(record);
    }
    if (!scales || slot < 0) continue;
    float amax = 0.0f;
    const int64_t g = first_overflow(static_cast<const char*>(a.k.data) + t * d.k_row_stride * elem, a.k.dtype, d, &amax);
    if (g >= 0) {
      const float sc = rules::int8_scale(amax);
      const int64_t record[kIkqCheckWords] = {kIkqScaleOverflow, t, g, rules::bits_of(amax), rules::bits_of(sc),
                                              0, 0, 0};
      throw kernel_error(record);
    }
  }
}

aop::Error kernel_error(const int64_t record[kIkqCheckWords]) {
  const std::string op(kOp);
  if (record[0] == kIkqSlotOutOfRange) {
    const int64_t t = record[1], slot = record[2], num_blocks = record[4], block_size = record[5];
    return aop::Error(AOP_INDEX_ERROR, op + ": slot_mapping[" + std::to_string(t) + "] = " + std::to_string(slot) +
                                           " is out of range: the cache has " + std::to_string(num_blocks * block_size) +
                                           " slots (num_blocks " + std::to_string(num_blocks) + " * block_size " +
                                           std::to_string(block_size) + ")");
  }
  if (record[0] == kIkqScaleOverflow) {
    return aop::Error(AOP_VALUE_ERROR, op + ": k_scale_cache is float16 but the scale of k[" + std::to_string(record[1]) +
                                           "] group " + std::to_string(record[2]) + " (amax " +
                                           float_string(record[3]) + " / 127 = " + float_string(record[4]) +
                                           ") overflows float16 (should be < 65520, amax <= about 127 * 65504); "
                                           "use a float32 k_scale_cache");
  }
  return aop::Error(AOP_RUNTIME_ERROR, op + ": internal: unknown kernel error code " + std::to_string(record[0]));
}

}  // namespace aop::indexer_k_quant_and_cache
