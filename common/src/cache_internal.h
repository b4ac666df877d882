// Internal: the cache and value structs shared by cache.cpp (the LRU operations) and
// cache_registry.cpp (the process-wide caches and the registry).
//
// One mutex per cache guards the LRU list, the index and the counters, so the counters are
// exact under concurrency. The index maps a view of the key bytes stored in the list node to
// the node: lookups hash the bytes and compare them in full. Values leave the cache by
// dropping the cache's reference; a deleter never runs under a cache's lock.
#pragma once
#include <atomic>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "ascend_ops/cache.h"
#include "ascend_ops/hash.h"

struct aop_value {
  std::atomic<uint64_t> refs{1};
  std::string bytes;
  void* object = nullptr;
  void (*deleter)(void*) = nullptr;
};

namespace aop_internal {

struct CacheEntry {
  std::string key;
  aop_value* value;
};
using EntryList = std::list<CacheEntry>;

struct KeyHash {
  size_t operator()(std::string_view key) const noexcept {
    return static_cast<size_t>(aop_hash_bytes(key.data(), key.size(), 0));
  }
};

// Drops one reference; the last runs the deleter (if any) and frees the value.
void release_value(aop_value* value) noexcept;

// Drops the cache's reference of every value in `dropped` (outside any cache lock).
void release_entries(EntryList& dropped) noexcept;

}  // namespace aop_internal

struct aop_cache {
  std::string name;
  bool builtin = false;
  mutable std::mutex mu;
  uint64_t capacity = 0;
  aop_internal::EntryList lru;  // most recently used first
  std::unordered_map<std::string_view, aop_internal::EntryList::iterator, aop_internal::KeyHash> index;
  uint64_t hits = 0, misses = 0, inserts = 0, evictions = 0;

  // Moves least recently used entries into `dropped` until the cache fits; under `mu`.
  void evict_to_capacity(aop_internal::EntryList& dropped) noexcept {
    while (lru.size() > capacity) {
      auto last = std::prev(lru.end());
      index.erase(std::string_view(last->key));
      dropped.splice(dropped.begin(), lru, last);
      ++evictions;
    }
  }
};

namespace aop_internal {
void fill_cache_stats(const aop_cache* cache, aop_cache_stats* out) noexcept;  // takes the lock
}  // namespace aop_internal
