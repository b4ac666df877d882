// Parallelism of the CPU kernels: a process-wide worker pool shared by every op, or, per
// calling thread, the framework's own intra-op pool.
//
// Which threads run a kernel (the first that applies):
//   1. an explicit count: ASCEND_OPS_NUM_THREADS at first use, or aop_set_num_threads(n > 0):
//      common's pool with that many threads, whoever calls;
//   2. a runner installed on the calling thread (the torch adapter installs torch's
//      at::parallel_for, so a call through torch follows torch.get_num_threads() and runs on
//      torch's OpenMP threads instead of competing with them);
//   3. common's pool with one thread per hardware thread.
#pragma once
#include <stdint.h>
#include "ascend_ops/export.h"

// Runs fn(ctx, begin, end) over [0, n) split into at most aop_num_threads() ranges of at
// least `grain` items each; returns when all ranges are done. fn must not throw.
typedef void (*aop_range_fn)(void* ctx, int64_t begin, int64_t end);

AOP_EXTERN_C_BEGIN
AOP_API void aop_parallel_for(int64_t n, int64_t grain, aop_range_fn fn, void* ctx) AOP_NOEXCEPT;
// Threads a parallel_for on this thread uses (see the precedence above).
AOP_API int32_t aop_num_threads(void) AOP_NOEXCEPT;
AOP_API void aop_set_num_threads(int32_t threads) AOP_NOEXCEPT;  // <= 0 restores the default

// A framework's parallel-for: runs fn(ctx, begin, end) over [0, n) in ranges of at least
// `grain` items on its own threads and returns when all are done.
typedef void (*aop_parallel_runner)(void* runner_ctx, int64_t n, int64_t grain, aop_range_fn fn, void* ctx);
// Installs `run` for the calling thread, with the thread count it uses (returned by
// aop_num_threads() on this thread unless an explicit count is set); run = NULL removes it.
AOP_API void aop_set_thread_runner(aop_parallel_runner run, void* runner_ctx, int32_t threads) AOP_NOEXCEPT;
// 1 if ASCEND_OPS_NUM_THREADS or aop_set_num_threads(n > 0) chose the thread count.
AOP_API int32_t aop_num_threads_explicit(void) AOP_NOEXCEPT;
AOP_EXTERN_C_END
