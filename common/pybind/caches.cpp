// Caches (cache.h): every live cache's counters, and a handle on one cache: the tiling or the
// operator cache, or a private cache the handle owns (tests put, get and evict through it).
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <utility>

#include "ascend_ops/cache.hpp"
#include "binding.hpp"

namespace aop_runtime {
namespace {

py::dict stats_dict(const aop_cache_stats& s) {
  py::dict d;
  d["name"] = text(s.name, sizeof(s.name));
  d["capacity"] = s.capacity;
  d["size"] = s.size;
  d["hits"] = s.hits;
  d["misses"] = s.misses;
  d["inserts"] = s.inserts;
  d["evictions"] = s.evictions;
  return d;
}

std::string bytes_of(const py::bytes& b) { return b; }

class CacheHandle {
 public:
  static CacheHandle process_wide(aop_cache* cache, const std::string& which) {
    if (cache == nullptr) throw aop::Error(AOP_RUNTIME_ERROR, "ascend-op-common returned no " + which + " cache");
    return CacheHandle(cache, aop::UniqueCache(), "set_cache_capacity('" + which + "', ");
  }
  static CacheHandle create(const std::string& name, uint64_t capacity) {
    aop::UniqueCache owned = aop::make_cache(name.c_str(), capacity);
    aop_cache* cache = owned.get();
    return CacheHandle(cache, std::move(owned), "Cache.set_capacity(");
  }

  py::dict stats() const {
    aop_cache_stats s;
    aop_cache_get_stats(live(), &s);
    return stats_dict(s);
  }
  void set_capacity(uint64_t capacity) {
    aop_cache* cache = live();
    aop_error err = aop::make_error();
    aop_status status;
    {
      py::gil_scoped_release nogil;  // evicted objects' deleters run here
      status = aop_cache_set_capacity(cache, capacity, &err);
    }
    raise_for(status, err, set_capacity_call_ + std::to_string(capacity) + ")");
  }
  void clear() {
    aop_cache* cache = live();
    py::gil_scoped_release nogil;
    aop_cache_clear(cache);
  }
  void reset_stats() { aop_cache_reset_stats(live()); }

  py::object get(const py::bytes& key) {
    const std::string k = bytes_of(key);
    aop::ValueHandle held(aop_cache_get(live(), k.data(), k.size()));
    if (!held) return py::none();
    size_t len = 0;
    const void* data = aop_value_bytes(held.get(), &len);
    return py::bytes(static_cast<const char*>(data), len);
  }
  void put(const py::bytes& key, const py::bytes& value) {
    const std::string k = bytes_of(key), v = bytes_of(value);
    aop_error err = aop::make_error();
    aop::ValueHandle held(aop_cache_put(live(), k.data(), k.size(), v.data(), v.size(), nullptr, nullptr, &err));
    if (!held) raise_for(err.status != AOP_OK ? err.status : AOP_RUNTIME_ERROR, err, "Cache.put()");
  }

  // Destroys a cache this handle created (it leaves the registry); no effect on the tiling and
  // operator caches, which live as long as the process.
  void close() {
    if (!owned_) return;
    aop::UniqueCache owned = std::move(owned_);
    cache_ = nullptr;
    py::gil_scoped_release nogil;
    owned.reset();
  }

 private:
  CacheHandle(aop_cache* cache, aop::UniqueCache owned, std::string set_capacity_call)
      : cache_(cache), owned_(std::move(owned)), set_capacity_call_(std::move(set_capacity_call)) {}

  aop_cache* live() const {
    if (cache_ == nullptr) throw aop::Error(AOP_VALUE_ERROR, "the cache was closed");
    return cache_;
  }

  aop_cache* cache_;
  aop::UniqueCache owned_;
  std::string set_capacity_call_;  // names the call in an error without a message
};

CacheHandle tiling_cache() { return CacheHandle::process_wide(aop_tiling_cache(), "tiling"); }
CacheHandle operator_cache() { return CacheHandle::process_wide(aop_operator_cache(), "operator"); }

py::list cache_stats() {
  tiling_cache();  // created at first use: listed even before any op ran
  operator_cache();
  py::list out;
  for (size_t i = 0, n = aop_cache_registry_size(); i < n; ++i) {
    aop_cache_stats s;
    if (aop_cache_registry_stats(i, &s)) out.append(stats_dict(s));
  }
  return out;
}

}  // namespace

void bind_caches(py::module_& m) {
  py::class_<CacheHandle>(m, "Cache", "A handle on one cache of libascend_ops_common.")
      .def_static("create", &CacheHandle::create, py::arg("name"), py::arg("capacity"),
                  "A private cache, registered until close().")
      .def("stats", &CacheHandle::stats)
      .def("set_capacity", &CacheHandle::set_capacity, py::arg("capacity"))
      .def("clear", &CacheHandle::clear, "Drops the entries, keeps the counters.")
      .def("reset_stats", &CacheHandle::reset_stats, "Zeroes the counters, keeps the entries.")
      .def("get", &CacheHandle::get, py::arg("key"), "The bytes stored for key, or None (counted).")
      .def("put", &CacheHandle::put, py::arg("key"), py::arg("value"),
           "Stores a copy of value; an entry already there for key wins.")
      .def("close", &CacheHandle::close);
  m.def("tiling_cache", &tiling_cache);
  m.def("operator_cache", &operator_cache);
  m.def("cache_stats", &cache_stats, "Counters of every live cache, in creation order.");
}

}  // namespace aop_runtime
