// Hashing of cache keys: (op, shapes, dtypes, attributes, platform) serialised into bytes.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "ascend_ops/export.h"

AOP_EXTERN_C_BEGIN
// 64-bit hash of `len` bytes, seeded; stable across processes and platforms.
AOP_API uint64_t aop_hash_bytes(const void* data, size_t len, uint64_t seed) AOP_NOEXCEPT;
AOP_EXTERN_C_END
