// The checks of reshape_and_cache's quantising modes (kv_cache_dtype != "auto"): which cache
// dtypes a mode writes, and the scales / offsets (shapes, dtypes, presence; their values in
// check_scales). Called by validated() (host/validate.cpp).
#pragma once
#include <cstdint>
#include <string>

#include "ascend_ops/tensor.h"
#include "host/reshape_and_cache.h"

namespace aop::reshape_and_cache {

// key's dtype in a quantised mode: float16, bfloat16 or float32 (TypeError).
void expect_quantisable_key(const Args& args);

// `cache` has a dtype mode `mode` writes for a key of dtype `key` (TypeError naming them).
void expect_cache_dtype(const char* name, const aop_tensor& cache, int32_t mode, aop_dtype key, const char* source = "key");

// Presence, dtype, shape ([], [1], [H], [H, D] or [H*D]), layout and device of the scales and
// offsets; dk / dv the head sizes of key and value (dv unused when key-only).
void expect_scales(const Args& canonical, int64_t heads, int64_t dk, int64_t dv);

// Element i of a float32 / float16 / bfloat16 scale or offset in host memory, as float32 (exact).
float scale_element(const aop_tensor& t, int64_t i);

// The message (without the op name) of a kRacBadScale error record.
std::string bad_scale_message(const int64_t record[kRacCheckWords]);

}  // namespace aop::reshape_and_cache
