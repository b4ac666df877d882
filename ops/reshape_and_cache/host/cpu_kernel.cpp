// The CPU backend: validate, check the slots, then copy rows in parallel over tokens.
#include <algorithm>
#include <cstring>

#include "ascend_ops/parallel.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/reshape_and_cache.h"

namespace aop::reshape_and_cache {
namespace {

// Below this many bytes per thread, waking workers costs more than the copy.
constexpr int64_t kBytesPerThread = 256 * 1024;

struct RowCopy {
  const char* src;
  char* dst;
  int64_t src_token_bytes;  // bytes between consecutive tokens of the source
  int64_t row_bytes;        // bytes of one token's row (== one cache slot)
};

RowCopy row_copy(const aop_tensor& src, const aop_tensor& cache) {
  const TensorView s(src);
  const int64_t elem = static_cast<int64_t>(aop_dtype_size(src.dtype));
  const int64_t row = s.dim(1) * s.dim(2);
  return RowCopy{static_cast<const char*>(src.data), static_cast<char*>(cache.data),
                 (s.dim(0) > 1 ? s.stride(0) : row) * elem, row * elem};
}

template <typename S>
void copy_tokens(const S* slots, int64_t count, const RowCopy& k, const RowCopy& v) {
  const int64_t bytes_per_token = k.row_bytes + v.row_bytes;
  const int64_t grain = std::max<int64_t>(1, kBytesPerThread / std::max<int64_t>(bytes_per_token, 1));
  parallel_for(count, grain, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t slot = static_cast<int64_t>(slots[t]);
      if (slot < 0) continue;  // padding token
      std::memcpy(k.dst + slot * k.row_bytes, k.src + t * k.src_token_bytes, k.row_bytes);
      std::memcpy(v.dst + slot * v.row_bytes, v.src + t * v.src_token_bytes, v.row_bytes);
    }
  });
}

}  // namespace

void run_cpu(const Args& a) {
  validate(a);
  if (a.key.device.type != AOP_DEVICE_CPU) {
    throw aop::Error(AOP_VALUE_ERROR, "reshape_and_cache: the cpu backend needs tensors on cpu, key is on " +
                                          device_string(a.key.device));
  }
  check_slots(a);
  const RowCopy k = row_copy(a.key, a.key_cache);
  const RowCopy v = row_copy(a.value, a.value_cache);
  const int64_t count = a.slot_mapping.shape[0];
  if (a.slot_mapping.dtype == AOP_DTYPE_INT64) {
    copy_tokens(static_cast<const int64_t*>(a.slot_mapping.data), count, k, v);
  } else {
    copy_tokens(static_cast<const int32_t*>(a.slot_mapping.data), count, k, v);
  }
}

}  // namespace aop::reshape_and_cache
