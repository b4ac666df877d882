// The process-wide tiling and operator caches and the registry of live caches (those two
// first), with capacities from ASCEND_OPS_TILING_CACHE_SIZE / ASCEND_OPS_OPERATOR_CACHE_SIZE.
#include <cstring>
#include <mutex>
#include <vector>

#include "cache_internal.h"
#include "env_internal.h"
#include "error_internal.h"

using aop_internal::guarded;
using aop_internal::set_error;

namespace {

struct CacheRegistry {
  std::mutex mu;
  std::vector<aop_cache*> caches;  // creation order
  aop_cache* tiling = nullptr;
  aop_cache* operators = nullptr;
};

aop_cache* new_cache(const char* name, uint64_t capacity) {
  auto* cache = new aop_cache;
  cache->name = (name != nullptr && name[0] != '\0') ? name : "unnamed";
  cache->capacity = capacity;
  return cache;
}

CacheRegistry* make_registry() {
  auto* reg = new CacheRegistry;
  reg->tiling = new_cache("tiling", aop_internal::env_uint("ASCEND_OPS_TILING_CACHE_SIZE", 1024, false));
  reg->tiling->builtin = true;
  reg->operators =
      new_cache("operator", aop_internal::env_uint("ASCEND_OPS_OPERATOR_CACHE_SIZE", 256, false));
  reg->operators->builtin = true;
  reg->caches = {reg->tiling, reg->operators};
  return reg;
}

// Created at first use and never destroyed: values may hold objects whose deleters live in
// modules that are already unloaded when static destructors run.
CacheRegistry& registry() {
  static CacheRegistry* reg = make_registry();
  return *reg;
}

}  // namespace

extern "C" {

aop_cache* aop_tiling_cache(void) noexcept {
  return guarded<aop_cache*>(nullptr, nullptr, [] { return registry().tiling; });
}

aop_cache* aop_operator_cache(void) noexcept {
  return guarded<aop_cache*>(nullptr, nullptr, [] { return registry().operators; });
}

aop_cache* aop_cache_create(const char* name, uint64_t capacity, aop_error* err) noexcept {
  aop_internal::clear_error(err);
  return guarded<aop_cache*>(err, nullptr, [&] {
    CacheRegistry& reg = registry();
    aop_cache* cache = new_cache(name, capacity);
    try {
      std::lock_guard<std::mutex> lock(reg.mu);
      reg.caches.push_back(cache);
    } catch (...) {
      delete cache;
      throw;
    }
    return cache;
  });
}

void aop_cache_destroy(aop_cache* cache) noexcept {
  if (cache == nullptr) return;
  if (cache->builtin) {
    set_error(nullptr, AOP_VALUE_ERROR, "aop_cache_destroy: the '%s' cache is process-wide and "
              "is never destroyed; use aop_cache_clear", cache->name.c_str());
    return;
  }
  {
    CacheRegistry& reg = registry();  // exists: `cache` was created through it
    std::lock_guard<std::mutex> lock(reg.mu);
    for (auto it = reg.caches.begin(); it != reg.caches.end(); ++it) {
      if (*it == cache) {
        reg.caches.erase(it);
        break;
      }
    }
  }
  aop_cache_clear(cache);
  delete cache;
}

size_t aop_cache_registry_size(void) noexcept {
  return guarded<size_t>(nullptr, 0, [] {
    CacheRegistry& reg = registry();
    std::lock_guard<std::mutex> lock(reg.mu);
    return reg.caches.size();
  });
}

int aop_cache_registry_stats(size_t index, aop_cache_stats* out) noexcept {
  if (out == nullptr) return 0;
  std::memset(out, 0, sizeof(*out));
  return guarded<int>(nullptr, 0, [&] {
    CacheRegistry& reg = registry();
    std::lock_guard<std::mutex> lock(reg.mu);  // keeps the cache alive while it is read
    if (index >= reg.caches.size()) return 0;
    aop_internal::fill_cache_stats(reg.caches[index], out);
    return 1;
  });
}

}  // extern "C"
