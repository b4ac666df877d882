// Thread-safe bounded LRU caches keyed by byte strings, with counters and a process-wide
// registry. Values are reference-counted blobs so an entry evicted while in use stays valid
// until its last holder releases it.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "ascend_ops/error.h"

typedef struct aop_cache aop_cache;
typedef struct aop_value aop_value;  // reference-counted cached value

#define AOP_NAME_BYTES 64

typedef struct aop_cache_stats {
  char name[AOP_NAME_BYTES];
  uint64_t capacity;  // max entries
  uint64_t size;      // current entries
  uint64_t hits;
  uint64_t misses;
  uint64_t inserts;
  uint64_t evictions;
} aop_cache_stats;

AOP_EXTERN_C_BEGIN
// The two process-wide caches every op uses. Capacity from ASCEND_OPS_TILING_CACHE_SIZE /
// ASCEND_OPS_OPERATOR_CACHE_SIZE at first use, else 1024 / 256.
AOP_API aop_cache* aop_tiling_cache(void) AOP_NOEXCEPT;
AOP_API aop_cache* aop_operator_cache(void) AOP_NOEXCEPT;

// Extra caches (tests, ops with private needs); registered until destroyed.
AOP_API aop_cache* aop_cache_create(const char* name, uint64_t capacity, aop_error* err) AOP_NOEXCEPT;
AOP_API void aop_cache_destroy(aop_cache* cache) AOP_NOEXCEPT;
AOP_API aop_status aop_cache_set_capacity(aop_cache* cache, uint64_t capacity, aop_error* err) AOP_NOEXCEPT;
AOP_API void aop_cache_clear(aop_cache* cache) AOP_NOEXCEPT;        // drops entries, keeps counters
AOP_API void aop_cache_reset_stats(aop_cache* cache) AOP_NOEXCEPT;  // zeroes counters
AOP_API void aop_cache_get_stats(const aop_cache* cache, aop_cache_stats* out) AOP_NOEXCEPT;

// Looks `key` up. On a hit returns a value the caller holds (release it) and counts a hit;
// on a miss returns NULL and counts a miss.
AOP_API aop_value* aop_cache_get(aop_cache* cache, const void* key, size_t key_len) AOP_NOEXCEPT;

// Inserts a value holding a copy of `bytes` and, if `object` is non-NULL, ownership of
// `object`, freed by `deleter` when the last holder lets go (both may be given: the C++
// wrapper stores a type tag in `bytes` beside the object). If the key is already present the
// existing entry wins and is returned (the new object is deleted). Returns a held value; NULL
// on failure, in which case the object has been deleted too. A module that puts objects must
// stay loaded while the cache may hold them (the deleter is its code).
AOP_API aop_value* aop_cache_put(aop_cache* cache, const void* key, size_t key_len,
                                 const void* bytes, size_t byte_len, void* object,
                                 void (*deleter)(void*), aop_error* err) AOP_NOEXCEPT;

AOP_API const void* aop_value_bytes(const aop_value* value, size_t* len) AOP_NOEXCEPT;
AOP_API void* aop_value_object(const aop_value* value) AOP_NOEXCEPT;
AOP_API void aop_value_retain(aop_value* value) AOP_NOEXCEPT;
AOP_API void aop_value_release(aop_value* value) AOP_NOEXCEPT;

// Registry of live caches, in creation order (tiling and operator caches first).
AOP_API size_t aop_cache_registry_size(void) AOP_NOEXCEPT;
AOP_API int aop_cache_registry_stats(size_t index, aop_cache_stats* out) AOP_NOEXCEPT;  // 0 if index is gone
AOP_EXTERN_C_END
