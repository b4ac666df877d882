// Hand-vectorised split int8 codes for x86-64 (AVX-512, AVX2 + FMA + F16C): the same codes as
// rules::int8_codes, bit for bit, chosen at run time by what the CPU has, capped by the
// environment variable ASCEND_OPS_CPU_ISA ("baseline", "avx2", "avx512").
#pragma once
#include <cstdint>

#include "ascend_ops/dtype.h"

namespace aop::indexer_k_quant_and_cache::x86 {

enum class Isa { kBaseline, kAvx2, kAvx512 };

// The ISA the int8 kernels use: the CPU's best, at most ASCEND_OPS_CPU_ISA's (read once).
Isa isa();
const char* isa_name(Isa isa);

// Writes q[0, n) = clamp(round_half_even(fl32(x / sc)), -128, 127) for the n elements of k at
// `src` (dtype k_dtype) and returns true; or returns false, writing nothing, when there is no fast
// kernel for this ISA, n, or sc (then the caller runs rules::int8_codes).
using Int8Codes = bool (*)(const void* src, float sc, int64_t n, int8_t* q);
Int8Codes int8_codes(Isa isa, aop_dtype k_dtype);

// The largest of s[i] & 0x7FFF over i < n (bfloat16 / float16 bits: the abs-max's bits), or -1 when
// there is no fast kernel for this n (the caller takes rows::abs_max). Exact integer work.
using AbsMaxBits16 = int32_t (*)(const uint16_t* s, int64_t n);
AbsMaxBits16 abs_max_bits16(Isa isa);

}  // namespace aop::indexer_k_quant_and_cache::x86
