// The CPU quantising write of one row: float16 / bfloat16 / float32 elements to int8 or fp8
// (E4M3FN, E5M2) codes with per-channel float32 scales and offsets, the same codes on every ISA
// build (only IEEE float32 division, addition and exact operations).
#pragma once
#include <cstdint>
#include <vector>

#include "ascend_ops/tensor.hpp"

namespace aop::reshape_and_cache {

struct QuantPlan {
  int32_t mode = 0;                   // KvCacheDtype, not kKvAuto
  aop_dtype in = AOP_DTYPE_FLOAT16;   // the dtype of the source row
  std::vector<float> scale, offset;   // per channel (H*D), the scale / offset of element j
};

// The plan for a source of dtype `in` with H heads of D: the scale / offset tensors (offset may
// be null: 0) expanded to per channel. Reads the scales (host memory).
QuantPlan quant_plan(int32_t mode, aop_dtype in, const aop_tensor& scale, const aop_tensor* offset, int64_t heads,
                     int64_t head_size);

// dst[j] = code of src[j] for j < n (n == plan.scale.size()).
void quantize_row(const QuantPlan& plan, const void* src, uint8_t* dst, int64_t n);

// The vector build quantize_row uses: "avx512", "avx2" or "baseline" (capped by ASCEND_OPS_CPU_ISA).
const char* quantize_isa();

}  // namespace aop::reshape_and_cache
