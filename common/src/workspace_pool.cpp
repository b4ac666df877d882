// The mechanics of a workspace pool: size classes, free lists, the bound, reference counts.
//
// A pool is itself reference-counted: its creator holds one reference and every block handed
// out holds one, so a pool destroyed while blocks are out lives until the last is released.
// Allocator calls are made outside the pool's lock; bytes are reserved under it first. Every
// counter changes under the pool's lock, so the counters are exact.
#include <cstdint>

#include "error_internal.h"
#include "workspace_internal.h"

using aop_internal::set_error;

void aop_pool::detach_cached(uint64_t need, std::vector<aop_block*>& out) {
  size_t blocks = 0;
  for (const auto& entry : free_lists) blocks += entry.second.size();
  out.reserve(out.size() + blocks);  // the only step that may throw, before any change
  while (!free_lists.empty() && (need == UINT64_MAX || in_use + cached + need > limit)) {
    auto last = std::prev(free_lists.end());
    std::vector<aop_block*>& list = last->second;
    out.push_back(list.back());
    list.pop_back();
    cached -= last->first;
    ++deallocations;
    if (list.empty()) free_lists.erase(last);
  }
}


void* aop_pool::allocate(size_t bytes) noexcept {
  try {
    return allocator.allocate(bytes, AOP_POOL_ALIGNMENT, allocator.ctx);
  } catch (...) {
    return nullptr;
  }
}

void aop_pool::deallocate(void* data, size_t bytes) noexcept {
  try {
    allocator.deallocate(data, bytes, allocator.ctx);
  } catch (...) {
    aop_internal::set_error(nullptr, AOP_RUNTIME_ERROR, "workspace pool '%s': allocator '%s' "
                            "threw while freeing %zu bytes", name.c_str(), allocator_name.c_str(), bytes);
  }
}

void aop_pool::free_blocks(std::vector<aop_block*>& blocks) noexcept {
  for (aop_block* b : blocks) {
    deallocate(b->data, b->size);
    delete b;
  }
  blocks.clear();
}

namespace {

constexpr size_t kSmallStep = 512;
constexpr size_t kSmallMax = 4096;

// Up to 4 KiB: multiples of 512 B. Above: four classes per power of two (2^k * 5/4, 6/4,
// 7/4, 8/4), so at most 25% is wasted. Every class is a multiple of 512. 0 if too large.
size_t size_class(size_t bytes) {
  if (bytes <= kSmallMax) return bytes == 0 ? kSmallStep : (bytes + kSmallStep - 1) / kSmallStep * kSmallStep;
  if (bytes > (SIZE_MAX >> 2)) return 0;
  size_t base = kSmallMax;
  while (base * 2 < bytes) base *= 2;  // base < bytes <= 2 * base
  const size_t step = base / 4;
  return (bytes + step - 1) / step * step;
}

}  // namespace

namespace aop_internal {

void pool_unref(aop_pool* pool) noexcept {
  if (pool->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete pool;
}

aop_pool* new_pool(const char* name, const aop_allocator& allocator, uint64_t limit) {
  auto* pool = new aop_pool;
  pool->name = (name != nullptr && name[0] != '\0') ? name : "unnamed";
  pool->allocator = allocator;
  pool->allocator_name = allocator.name != nullptr ? allocator.name : "unnamed";
  pool->allocator.name = pool->allocator_name.c_str();
  pool->limit = limit;
  return pool;
}

aop_block* pool_acquire(aop_pool* pool, size_t bytes, aop_error* err) {
  const size_t cls = size_class(bytes);
  if (cls == 0) {
    set_error(err, AOP_MEMORY_ERROR, "workspace pool '%s': a request of %zu bytes is too large",
              pool->name.c_str(), bytes);
    return nullptr;
  }
  std::vector<aop_block*> to_free;
  {
    std::lock_guard<std::mutex> lock(pool->mu);
    auto found = pool->free_lists.find(cls);
    if (found != pool->free_lists.end()) {  // reuse a cached block of the same class
      aop_block* block = found->second.back();
      found->second.pop_back();
      if (found->second.empty()) pool->free_lists.erase(found);
      pool->cached -= cls;
      pool->in_use += cls;
      ++pool->reuses;
      ++pool->acquires;
      ++pool->live;
      block->refs.store(1, std::memory_order_relaxed);
      pool->refs.fetch_add(1, std::memory_order_relaxed);
      return block;
    }
    if (cls > pool->limit || pool->in_use + cls > pool->limit) {
      set_error(err, AOP_MEMORY_ERROR,
                "workspace pool '%s' cannot provide a block for a request of %zu bytes "
                "(size class %zu bytes): its bound is %llu bytes and %llu bytes are in use by "
                "%llu blocks; release blocks or raise the bound (ASCEND_OPS_WORKSPACE_LIMIT "
                "for the default pool)",
                pool->name.c_str(), bytes, cls, static_cast<unsigned long long>(pool->limit),
                static_cast<unsigned long long>(pool->in_use),
                static_cast<unsigned long long>(pool->live));
      return nullptr;
    }
    pool->detach_cached(cls, to_free);  // trim cached blocks until the new one fits
    pool->in_use += cls;                // reserve
    if (pool->in_use + pool->cached > pool->peak) pool->peak = pool->in_use + pool->cached;
  }
  pool->free_blocks(to_free);

  void* data = pool->allocate(cls);
  if (data == nullptr) {  // give every cached block back and try once more
    try {
      std::lock_guard<std::mutex> lock(pool->mu);
      pool->detach_cached(UINT64_MAX, to_free);
    } catch (...) {
      // nothing detached: the retry below is skipped
    }
    if (!to_free.empty()) {
      pool->free_blocks(to_free);
      data = pool->allocate(cls);
    }
  }
  aop_block* block = nullptr;
  aop_status status = AOP_OK;
  if (data == nullptr) {
    status = AOP_MEMORY_ERROR;
  } else if (reinterpret_cast<uintptr_t>(data) % AOP_POOL_ALIGNMENT != 0) {
    pool->deallocate(data, cls);
    status = AOP_RUNTIME_ERROR;
  } else {
    try {
      block = new aop_block{pool, data, cls};
    } catch (...) {
      pool->deallocate(data, cls);
      status = AOP_MEMORY_ERROR;
    }
  }
  std::lock_guard<std::mutex> lock(pool->mu);
  if (block == nullptr) {
    pool->in_use -= cls;  // drop the reservation
    if (status == AOP_RUNTIME_ERROR) {
      set_error(err, status, "workspace pool '%s': allocator '%s' returned memory not aligned "
                "to %d bytes", pool->name.c_str(), pool->allocator_name.c_str(), AOP_POOL_ALIGNMENT);
    } else {
      set_error(err, status, "workspace pool '%s': allocator '%s' could not allocate %zu bytes "
                "(request %zu bytes); bound %llu bytes, %llu bytes in use",
                pool->name.c_str(), pool->allocator_name.c_str(), cls, bytes,
                static_cast<unsigned long long>(pool->limit),
                static_cast<unsigned long long>(pool->in_use));
    }
    return nullptr;
  }
  ++pool->allocations;
  ++pool->acquires;
  ++pool->live;
  block->refs.store(1, std::memory_order_relaxed);
  pool->refs.fetch_add(1, std::memory_order_relaxed);
  return block;
}

void pool_return(aop_block* block) noexcept {
  aop_pool* pool = block->pool;
  bool cached = false;
  {
    std::lock_guard<std::mutex> lock(pool->mu);
    pool->in_use -= block->size;
    --pool->live;
    if (!pool->destroyed) {
      try {
        pool->free_lists[block->size].push_back(block);
        pool->cached += block->size;
        cached = true;
      } catch (...) {
        // no room to remember it: free it below
      }
    }
    if (!cached) ++pool->deallocations;
  }
  if (!cached) {
    pool->deallocate(block->data, block->size);
    delete block;
  }
  pool_unref(pool);
}

}  // namespace aop_internal
