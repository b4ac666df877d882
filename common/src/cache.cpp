// The LRU operations of a cache and its reference-counted values (see cache_internal.h).
#include <cstring>
#include <string>
#include <string_view>

#include "cache_internal.h"
#include "error_internal.h"

using aop_internal::EntryList;
using aop_internal::guarded;
using aop_internal::release_entries;
using aop_internal::release_value;
using aop_internal::set_error;

namespace aop_internal {

void release_value(aop_value* value) noexcept {
  if (value == nullptr || value->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (value->object != nullptr && value->deleter != nullptr) {
    try {
      value->deleter(value->object);
    } catch (...) {
      set_error(nullptr, AOP_RUNTIME_ERROR, "a cached object's deleter threw; ignored");
    }
  }
  delete value;
}

void release_entries(EntryList& dropped) noexcept {
  for (CacheEntry& e : dropped) release_value(e.value);
  dropped.clear();
}

void fill_cache_stats(const aop_cache* cache, aop_cache_stats* out) noexcept {
  std::lock_guard<std::mutex> lock(cache->mu);
  aop_internal::copy_name(out->name, sizeof(out->name), cache->name.c_str());
  out->capacity = cache->capacity;
  out->size = cache->lru.size();
  out->hits = cache->hits;
  out->misses = cache->misses;
  out->inserts = cache->inserts;
  out->evictions = cache->evictions;
}

}  // namespace aop_internal

extern "C" {

aop_status aop_cache_set_capacity(aop_cache* cache, uint64_t capacity, aop_error* err) noexcept {
  aop_internal::clear_error(err);
  if (cache == nullptr) {
    set_error(err, AOP_VALUE_ERROR, "aop_cache_set_capacity: cache should not be NULL");
    return AOP_VALUE_ERROR;
  }
  EntryList dropped;
  {
    std::lock_guard<std::mutex> lock(cache->mu);
    cache->capacity = capacity;
    cache->evict_to_capacity(dropped);
  }
  release_entries(dropped);
  return AOP_OK;
}

void aop_cache_clear(aop_cache* cache) noexcept {
  if (cache == nullptr) return;
  EntryList dropped;
  {
    std::lock_guard<std::mutex> lock(cache->mu);
    cache->index.clear();
    dropped.splice(dropped.begin(), cache->lru);
  }
  release_entries(dropped);
}

void aop_cache_reset_stats(aop_cache* cache) noexcept {
  if (cache == nullptr) return;
  std::lock_guard<std::mutex> lock(cache->mu);
  cache->hits = cache->misses = cache->inserts = cache->evictions = 0;
}

void aop_cache_get_stats(const aop_cache* cache, aop_cache_stats* out) noexcept {
  if (out == nullptr) return;
  std::memset(out, 0, sizeof(*out));
  if (cache != nullptr) aop_internal::fill_cache_stats(cache, out);
}

aop_value* aop_cache_get(aop_cache* cache, const void* key, size_t key_len) noexcept {
  if (cache == nullptr || (key == nullptr && key_len != 0)) return nullptr;
  const std::string_view view(static_cast<const char*>(key), key_len);
  std::lock_guard<std::mutex> lock(cache->mu);
  auto found = cache->index.find(view);
  if (found == cache->index.end()) {
    ++cache->misses;
    return nullptr;
  }
  cache->lru.splice(cache->lru.begin(), cache->lru, found->second);
  ++cache->hits;
  aop_value* value = found->second->value;
  value->refs.fetch_add(1, std::memory_order_relaxed);
  return value;
}

aop_value* aop_cache_put(aop_cache* cache, const void* key, size_t key_len, const void* bytes,
                         size_t byte_len, void* object, void (*deleter)(void*),
                         aop_error* err) noexcept {
  aop_internal::clear_error(err);
  const char* problem = nullptr;
  if (cache == nullptr) problem = "cache should not be NULL";
  else if (key == nullptr && key_len != 0) problem = "key should not be NULL when key_len > 0";
  else if (bytes == nullptr && byte_len != 0) problem = "bytes should not be NULL when byte_len > 0";
  if (problem != nullptr) {
    if (object != nullptr && deleter != nullptr) deleter(object);
    set_error(err, AOP_VALUE_ERROR, "aop_cache_put: %s", problem);
    return nullptr;
  }
  aop_value* fresh = nullptr;
  try {
    fresh = new aop_value;
  } catch (...) {
    if (object != nullptr && deleter != nullptr) deleter(object);
    set_error(err, AOP_MEMORY_ERROR, "aop_cache_put: out of host memory");
    return nullptr;
  }
  fresh->object = object;
  fresh->deleter = deleter;
  return guarded<aop_value*>(err, nullptr, [&]() -> aop_value* {
    EntryList node;  // allocated outside the lock, spliced in under it
    try {
      fresh->bytes.assign(static_cast<const char*>(bytes), byte_len);
      node.push_back(aop_internal::CacheEntry{std::string(static_cast<const char*>(key), key_len), fresh});
    } catch (...) {
      release_value(fresh);
      throw;
    }
    EntryList dropped;
    aop_value* result = fresh;
    {
      std::unique_lock<std::mutex> lock(cache->mu);
      auto found = cache->index.find(std::string_view(node.front().key));
      if (found != cache->index.end()) {  // the entry already there wins
        cache->lru.splice(cache->lru.begin(), cache->lru, found->second);
        result = found->second->value;
        result->refs.fetch_add(1, std::memory_order_relaxed);
      } else {
        cache->lru.splice(cache->lru.begin(), node);
        try {
          cache->index.emplace(std::string_view(cache->lru.front().key), cache->lru.begin());
        } catch (...) {
          node.splice(node.begin(), cache->lru, cache->lru.begin());
          lock.unlock();
          release_value(fresh);
          throw;
        }
        fresh->refs.store(2, std::memory_order_relaxed);  // the cache's and the caller's
        ++cache->inserts;
        cache->evict_to_capacity(dropped);
      }
    }
    if (result != fresh) release_value(fresh);  // deletes the caller's object
    release_entries(dropped);
    return result;
  });
}

const void* aop_value_bytes(const aop_value* value, size_t* len) noexcept {
  if (value == nullptr) {
    if (len != nullptr) *len = 0;
    return nullptr;
  }
  if (len != nullptr) *len = value->bytes.size();
  return value->bytes.data();
}

void* aop_value_object(const aop_value* value) noexcept {
  return value != nullptr ? value->object : nullptr;
}

void aop_value_retain(aop_value* value) noexcept {
  if (value != nullptr) value->refs.fetch_add(1, std::memory_order_relaxed);
}

void aop_value_release(aop_value* value) noexcept { release_value(value); }

}  // extern "C"
