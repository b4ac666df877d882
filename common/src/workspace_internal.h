// Internal: the pool and block structs shared by workspace_pool.cpp (the mechanics) and
// workspace.cpp (the C interface and the registry).
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "ascend_ops/workspace.h"

struct aop_block {
  aop_pool* pool;
  void* data;
  size_t size;  // the size class
  std::atomic<uint64_t> refs{0};
};

struct aop_pool {
  std::string name;
  std::string allocator_name;
  aop_allocator allocator{};
  bool builtin = false;
  std::atomic<uint64_t> refs{1};  // the creator's + one per live block

  mutable std::mutex mu;  // guards everything below
  bool destroyed = false;
  uint64_t limit = 0;
  std::map<size_t, std::vector<aop_block*>> free_lists;  // by size class
  uint64_t in_use = 0, cached = 0, peak = 0;
  uint64_t allocations = 0, deallocations = 0, reuses = 0, acquires = 0, live = 0;

  // Detaches cached blocks, largest first, until `need` more bytes fit under the bound (or
  // every cached block when need == UINT64_MAX); counts them as deallocated. Under `mu`.
  void detach_cached(uint64_t need, std::vector<aop_block*>& out);
  // The allocator is foreign code: an exception from it is reported, never propagated.
  void* allocate(size_t bytes) noexcept;
  void deallocate(void* data, size_t bytes) noexcept;
  void free_blocks(std::vector<aop_block*>& blocks) noexcept;  // outside `mu`
};

namespace aop_internal {

aop_pool* new_pool(const char* name, const aop_allocator& allocator, uint64_t limit);

// A held block of the size class of `bytes`: reused from the free list, or allocated after
// trimming cached blocks to fit the bound. NULL with `err` set otherwise.
aop_block* pool_acquire(aop_pool* pool, size_t bytes, aop_error* err);

// The last holder let go: back to the free list, or to the allocator if the pool is gone.
void pool_return(aop_block* block) noexcept;

// Drops one reference to `pool`; the last one deletes it.
void pool_unref(aop_pool* pool) noexcept;

}  // namespace aop_internal
