// The workspace C interface: the host allocator, the registry of live pools (the default pool
// first), and the aop_pool_* / aop_block_* entry points over workspace_pool.cpp.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "ascend_ops/workspace.h"
#include "env_internal.h"
#include "error_internal.h"
#include "workspace_internal.h"

using aop_internal::guarded;
using aop_internal::set_error;

namespace {

void* host_allocate(size_t bytes, size_t alignment, void* /*ctx*/) {
  void* ptr = nullptr;
  return posix_memalign(&ptr, alignment, bytes) == 0 ? ptr : nullptr;
}

void host_deallocate(void* ptr, size_t /*bytes*/, void* /*ctx*/) { std::free(ptr); }

struct PoolRegistry {
  std::mutex mu;
  std::vector<aop_pool*> pools;  // creation order, default pool first
  aop_pool* default_pool = nullptr;
};

PoolRegistry* make_registry() {
  auto* reg = new PoolRegistry;
  const uint64_t limit = aop_internal::env_uint("ASCEND_OPS_WORKSPACE_LIMIT", 1ull << 30, true);
  reg->default_pool = aop_internal::new_pool("default", aop_host_allocator(), limit);
  reg->default_pool->builtin = true;
  reg->pools.push_back(reg->default_pool);
  return reg;
}

// Created at first use and never destroyed (blocks may outlive static destructors).
PoolRegistry& registry() {
  static PoolRegistry* reg = make_registry();
  return *reg;
}

void fill_stats(const aop_pool* pool, aop_pool_stats* out) noexcept {
  std::lock_guard<std::mutex> lock(pool->mu);
  aop_internal::copy_name(out->name, sizeof(out->name), pool->name.c_str());
  out->limit_bytes = pool->limit;
  out->in_use_bytes = pool->in_use;
  out->cached_bytes = pool->cached;
  out->peak_bytes = pool->peak;
  out->allocations = pool->allocations;
  out->deallocations = pool->deallocations;
  out->reuses = pool->reuses;
  out->acquires = pool->acquires;
  out->live_blocks = pool->live;
}

}  // namespace

extern "C" {

aop_allocator aop_host_allocator(void) noexcept {
  return aop_allocator{host_allocate, host_deallocate, nullptr, "host"};
}

aop_pool* aop_default_pool(void) noexcept {
  return guarded<aop_pool*>(nullptr, nullptr, [] { return registry().default_pool; });
}

aop_pool* aop_pool_create(const char* name, const aop_allocator* allocator, uint64_t limit_bytes,
                          aop_error* err) noexcept {
  aop_internal::clear_error(err);
  const aop_allocator chosen = allocator != nullptr ? *allocator : aop_host_allocator();
  if (chosen.allocate == nullptr || chosen.deallocate == nullptr) {
    set_error(err, AOP_VALUE_ERROR, "aop_pool_create('%s'): the allocator should have both "
              "allocate and deallocate", name != nullptr ? name : "unnamed");
    return nullptr;
  }
  if (limit_bytes == 0) {
    set_error(err, AOP_VALUE_ERROR, "aop_pool_create('%s'): limit_bytes should be > 0",
              name != nullptr ? name : "unnamed");
    return nullptr;
  }
  return guarded<aop_pool*>(err, nullptr, [&] {
    PoolRegistry& reg = registry();
    aop_pool* pool = aop_internal::new_pool(name, chosen, limit_bytes);
    try {
      std::lock_guard<std::mutex> lock(reg.mu);
      reg.pools.push_back(pool);
    } catch (...) {
      delete pool;
      throw;
    }
    return pool;
  });
}

void aop_pool_destroy(aop_pool* pool) noexcept {
  if (pool == nullptr) return;
  if (pool->builtin) {
    set_error(nullptr, AOP_VALUE_ERROR, "aop_pool_destroy: the '%s' pool is process-wide and is "
              "never destroyed; use aop_pool_trim", pool->name.c_str());
    return;
  }
  {
    PoolRegistry& reg = registry();
    std::lock_guard<std::mutex> lock(reg.mu);
    for (auto it = reg.pools.begin(); it != reg.pools.end(); ++it) {
      if (*it == pool) {
        reg.pools.erase(it);
        break;
      }
    }
  }
  std::vector<aop_block*> to_free;
  guarded<int>(nullptr, 0, [&] {
    std::lock_guard<std::mutex> lock(pool->mu);
    pool->destroyed = true;
    pool->detach_cached(UINT64_MAX, to_free);
    return 0;
  });
  pool->free_blocks(to_free);
  aop_internal::pool_unref(pool);
}

aop_block* aop_pool_acquire(aop_pool* pool, size_t bytes, aop_error* err) noexcept {
  aop_internal::clear_error(err);
  if (pool == nullptr) {
    set_error(err, AOP_VALUE_ERROR, "aop_pool_acquire: pool should not be NULL");
    return nullptr;
  }
  return guarded<aop_block*>(err, nullptr, [&] { return aop_internal::pool_acquire(pool, bytes, err); });
}

void aop_pool_trim(aop_pool* pool) noexcept {
  if (pool == nullptr) return;
  std::vector<aop_block*> to_free;
  guarded<int>(nullptr, 0, [&] {
    std::lock_guard<std::mutex> lock(pool->mu);
    pool->detach_cached(UINT64_MAX, to_free);
    return 0;
  });
  pool->free_blocks(to_free);
}

void aop_pool_get_stats(const aop_pool* pool, aop_pool_stats* out) noexcept {
  if (out == nullptr) return;
  std::memset(out, 0, sizeof(*out));
  if (pool != nullptr) fill_stats(pool, out);
}

void aop_pool_reset_peak(aop_pool* pool) noexcept {
  if (pool == nullptr) return;
  std::lock_guard<std::mutex> lock(pool->mu);
  pool->peak = pool->in_use + pool->cached;
}

void* aop_block_data(const aop_block* block) noexcept {
  return block != nullptr ? block->data : nullptr;
}

size_t aop_block_size(const aop_block* block) noexcept {
  return block != nullptr ? block->size : 0;
}

void aop_block_retain(aop_block* block) noexcept {
  if (block != nullptr) block->refs.fetch_add(1, std::memory_order_relaxed);
}

void aop_block_release(aop_block* block) noexcept {
  if (block == nullptr) return;
  const uint64_t before = block->refs.fetch_sub(1, std::memory_order_acq_rel);
  if (before == 1) {
    aop_internal::pool_return(block);
  } else if (before == 0) {
    block->refs.store(0, std::memory_order_relaxed);
    set_error(nullptr, AOP_RUNTIME_ERROR, "aop_block_release: block %p of pool '%s' was "
              "released more often than acquired/retained; ignored",
              static_cast<void*>(block), block->pool->name.c_str());
  }
}

size_t aop_pool_registry_size(void) noexcept {
  return guarded<size_t>(nullptr, 0, [] {
    PoolRegistry& reg = registry();
    std::lock_guard<std::mutex> lock(reg.mu);
    return reg.pools.size();
  });
}

int aop_pool_registry_stats(size_t index, aop_pool_stats* out) noexcept {
  if (out == nullptr) return 0;
  std::memset(out, 0, sizeof(*out));
  return guarded<int>(nullptr, 0, [&] {
    PoolRegistry& reg = registry();
    std::lock_guard<std::mutex> lock(reg.mu);  // keeps the pool alive while it is read
    if (index >= reg.pools.size()) return 0;
    fill_stats(reg.pools[index], out);
    return 1;
  });
}

}  // extern "C"
