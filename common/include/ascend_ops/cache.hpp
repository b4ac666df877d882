// aop::Cache: the C++ face of the process-wide caches.
//
//   Tiling cache: trivially-copyable tiling structs, copied in and out.
//     Tiling t = aop::tiling_cache().get_or_compute_pod<Tiling>(key, [&] { return tile(...); });
//   Operator cache: objects that are expensive to build, shared while held.
//     std::shared_ptr<State> s = aop::operator_cache().get_or_create_object<State>(key,
//         [&] { return std::make_unique<State>(...); });
//
// An object built by a module is deleted by that module's code, and is tagged with its type and
// the module's C++ ABI: an entry built by a module of the other ABI is refused, never cast.
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "ascend_ops/cache.h"
#include "ascend_ops/config.hpp"
#include "ascend_ops/error.hpp"
#include "ascend_ops/hash.hpp"

AOP_NAMESPACE_BEGIN

using CacheStats = aop_cache_stats;

// A held aop_value, released on destruction.
struct ValueReleaser {
  void operator()(aop_value* v) const noexcept { aop_value_release(v); }
};
using ValueHandle = std::unique_ptr<aop_value, ValueReleaser>;

struct CacheDestroyer {
  void operator()(aop_cache* c) const noexcept { aop_cache_destroy(c); }
};
using UniqueCache = std::unique_ptr<aop_cache, CacheDestroyer>;  // an owned extra cache

// Non-owning: the process-wide caches live for the whole process.
class Cache {
 public:
  explicit Cache(aop_cache* cache) : cache_(cache) {
    check(cache != nullptr, AOP_RUNTIME_ERROR, "the cache could not be created (out of memory)");
  }
  aop_cache* get() const noexcept { return cache_; }

  CacheStats stats() const noexcept {
    CacheStats s;
    aop_cache_get_stats(cache_, &s);
    return s;
  }
  void clear() noexcept { aop_cache_clear(cache_); }
  void reset_stats() noexcept { aop_cache_reset_stats(cache_); }
  void set_capacity(uint64_t capacity) {
    aop_error err = make_error();
    throw_if(aop_cache_set_capacity(cache_, capacity, &err), err);
  }

  ValueHandle find(const KeyBuilder& key) const noexcept {
    return ValueHandle(aop_cache_get(cache_, key.data(), key.size()));
  }

  // The cached T for `key`, or compute() (a T) stored and returned. On a race the first stored
  // value wins and every caller returns it. compute() may throw; nothing is stored then.
  template <class T, class F>
  T get_or_compute_pod(const KeyBuilder& key, F&& compute) {
    static_assert(std::is_trivially_copyable<T>::value, "tiling structs must be trivially copyable");
    if (ValueHandle hit = find(key)) return read_pod<T>(hit.get(), key);
    const T fresh = compute();
    aop_error err = make_error();
    ValueHandle stored(aop_cache_put(cache_, key.data(), key.size(), &fresh, sizeof(T), nullptr,
                                     nullptr, &err));
    if (!stored) throw_if(err.status != AOP_OK ? err.status : AOP_RUNTIME_ERROR, err);
    return read_pod<T>(stored.get(), key);
  }

  // The cached object for `key`, or create() (a std::unique_ptr<T>, a T* owned from then on, or
  // a T moved into a new object) stored and returned. The shared_ptr holds the cache entry:
  // the object stays valid while held, even if the entry is evicted meanwhile.
  template <class T, class F>
  std::shared_ptr<T> get_or_create_object(const KeyBuilder& key, F&& create) {
    if (ValueHandle hit = find(key)) return share<T>(std::move(hit), key);
    const std::string tag = type_tag<T>();
    T* object = release_object<T>(create());
    aop_error err = make_error();
    ValueHandle stored(aop_cache_put(cache_, key.data(), key.size(), tag.data(), tag.size(), object,
                                     &delete_object<T>, &err));
    if (!stored) throw_if(err.status != AOP_OK ? err.status : AOP_RUNTIME_ERROR, err);
    return share<T>(std::move(stored), key);
  }

 private:
  template <class T>
  T read_pod(const aop_value* v, const KeyBuilder& key) const {
    size_t len = 0;
    const void* bytes = aop_value_bytes(v, &len);
    check(len == sizeof(T) && aop_value_object(v) == nullptr, AOP_RUNTIME_ERROR, "cache '",
          stats().name, "': the entry for key hash ", key.hash(), " holds ", len,
          " bytes, expected a ", sizeof(T), "-byte struct (two users share a key)");
    T out;
    std::memcpy(&out, bytes, sizeof(T));
    return out;
  }

  template <class T>
  static std::string type_tag() {
    return str(typeid(T).name(), "/size=", sizeof(T), "/cxx11abi=", AOP_CXX_ABI_VALUE);
  }

  template <class T>
  std::shared_ptr<T> share(ValueHandle v, const KeyBuilder& key) const {
    size_t len = 0;
    const char* bytes = static_cast<const char*>(aop_value_bytes(v.get(), &len));
    const std::string tag = type_tag<T>();
    if (aop_value_object(v.get()) == nullptr || std::string(bytes, len) != tag) {
      fail(AOP_RUNTIME_ERROR, "cache '", stats().name, "': the entry for key hash ", key.hash(),
           " holds '", std::string(bytes, len), "', expected '", tag,
           "' (two users share a key, or modules of different C++ ABIs)");
    }
    T* object = static_cast<T*>(aop_value_object(v.get()));
    aop_value* raw = v.release();
    return std::shared_ptr<T>(object, [raw](T*) noexcept { aop_value_release(raw); });
  }

  template <class T>
  static void delete_object(void* p) noexcept {
    delete static_cast<T*>(p);
  }

  template <class T>
  static T* release_object(std::unique_ptr<T> p) noexcept { return p.release(); }
  template <class T>
  static T* release_object(T* p) noexcept { return p; }
  template <class T, class U,
            class = std::enable_if_t<std::is_same<std::decay_t<U>, T>::value>>
  static T* release_object(U&& value) { return new T(std::forward<U>(value)); }

  aop_cache* cache_;
};

inline Cache tiling_cache() { return Cache(aop_tiling_cache()); }
inline Cache operator_cache() { return Cache(aop_operator_cache()); }

// An extra cache owned by the caller (tests, ops with private needs).
inline UniqueCache make_cache(const char* name, uint64_t capacity) {
  aop_error err = make_error();
  UniqueCache cache(aop_cache_create(name, capacity, &err));
  if (!cache) throw_if(err.status != AOP_OK ? err.status : AOP_RUNTIME_ERROR, err);
  return cache;
}

AOP_NAMESPACE_END
