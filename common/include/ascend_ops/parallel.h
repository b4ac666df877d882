// A process-wide worker pool for CPU kernels, shared by every op.
#pragma once
#include <stdint.h>
#include "ascend_ops/export.h"

// Runs fn(ctx, begin, end) over [0, n) split into at most aop_num_threads() ranges of at
// least `grain` items each; returns when all ranges are done. fn must not throw.
typedef void (*aop_range_fn)(void* ctx, int64_t begin, int64_t end);

AOP_EXTERN_C_BEGIN
AOP_API void aop_parallel_for(int64_t n, int64_t grain, aop_range_fn fn, void* ctx) AOP_NOEXCEPT;
// Worker count: ASCEND_OPS_NUM_THREADS at first use, else the hardware concurrency.
AOP_API int32_t aop_num_threads(void) AOP_NOEXCEPT;
AOP_API void aop_set_num_threads(int32_t threads) AOP_NOEXCEPT;  // <= 0 restores the default
AOP_EXTERN_C_END
