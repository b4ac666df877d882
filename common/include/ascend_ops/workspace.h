// Workspace pool: reference-counted blocks from a pluggable allocator, reused by size,
// bounded in total bytes, with counters.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "ascend_ops/cache.h"
#include "ascend_ops/error.h"

typedef struct aop_pool aop_pool;
typedef struct aop_block aop_block;

// The device allocator: aligned host memory on CPU, the framework's or aclrtMalloc on NPU.
typedef struct aop_allocator {
  void* (*allocate)(size_t bytes, size_t alignment, void* ctx);  // NULL on failure
  void (*deallocate)(void* ptr, size_t bytes, void* ctx);
  void* ctx;
  const char* name;  // copied at pool creation
} aop_allocator;

typedef struct aop_pool_stats {
  char name[AOP_NAME_BYTES];
  uint64_t limit_bytes;     // bound on bytes held (in use + cached)
  uint64_t in_use_bytes;    // bytes of blocks handed out and not yet released
  uint64_t cached_bytes;    // bytes of free blocks kept for reuse
  uint64_t peak_bytes;      // high-water mark of in_use + cached
  uint64_t allocations;     // successful calls to the allocator
  uint64_t deallocations;   // calls to the deallocator (equal to allocations after a trim
                            // when no block is held)
  uint64_t reuses;          // requests served from a cached block
  uint64_t acquires;        // all successful requests
  uint64_t live_blocks;     // blocks handed out and not yet released
} aop_pool_stats;

#define AOP_POOL_ALIGNMENT 512  // every block is aligned to this many bytes

AOP_EXTERN_C_BEGIN
AOP_API aop_allocator aop_host_allocator(void) AOP_NOEXCEPT;  // aligned host memory

// The process-wide CPU pool; bound from ASCEND_OPS_WORKSPACE_LIMIT (bytes), else 1 GiB.
AOP_API aop_pool* aop_default_pool(void) AOP_NOEXCEPT;

AOP_API aop_pool* aop_pool_create(const char* name, const aop_allocator* allocator,
                                  uint64_t limit_bytes, aop_error* err) AOP_NOEXCEPT;
AOP_API void aop_pool_destroy(aop_pool* pool) AOP_NOEXCEPT;  // blocks still held keep it alive
// Returns a held block of at least `bytes` (rounded up to the pool's size classes), or NULL
// with AOP_MEMORY_ERROR naming the pool, the request, the bound and the bytes in use.
AOP_API aop_block* aop_pool_acquire(aop_pool* pool, size_t bytes, aop_error* err) AOP_NOEXCEPT;
AOP_API void aop_pool_trim(aop_pool* pool) AOP_NOEXCEPT;  // frees every cached block
AOP_API void aop_pool_get_stats(const aop_pool* pool, aop_pool_stats* out) AOP_NOEXCEPT;
AOP_API void aop_pool_reset_peak(aop_pool* pool) AOP_NOEXCEPT;

AOP_API void* aop_block_data(const aop_block* block) AOP_NOEXCEPT;
AOP_API size_t aop_block_size(const aop_block* block) AOP_NOEXCEPT;
AOP_API void aop_block_retain(aop_block* block) AOP_NOEXCEPT;
AOP_API void aop_block_release(aop_block* block) AOP_NOEXCEPT;  // last release returns it to the pool

// Registry of live pools (default pool first).
AOP_API size_t aop_pool_registry_size(void) AOP_NOEXCEPT;
AOP_API int aop_pool_registry_stats(size_t index, aop_pool_stats* out) AOP_NOEXCEPT;
AOP_EXTERN_C_END
