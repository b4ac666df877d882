// Workspace pools (workspace.h): every live pool's counters, trimming the default pool, and a
// block of the default pool held from Python (tests watch the counters move).
#include <pybind11/pybind11.h>

#include <cstdint>
#include <utility>

#include "ascend_ops/workspace.hpp"
#include "binding.hpp"

namespace aop_runtime {
namespace {

py::dict stats_dict(const aop_pool_stats& s) {
  py::dict d;
  d["name"] = text(s.name, sizeof(s.name));
  d["limit_bytes"] = s.limit_bytes;
  d["in_use_bytes"] = s.in_use_bytes;
  d["cached_bytes"] = s.cached_bytes;
  d["peak_bytes"] = s.peak_bytes;
  d["allocations"] = s.allocations;
  d["deallocations"] = s.deallocations;
  d["reuses"] = s.reuses;
  d["acquires"] = s.acquires;
  d["live_blocks"] = s.live_blocks;
  return d;
}

py::list pool_stats() {
  aop_default_pool();  // created at first use: listed first even before any op ran
  py::list out;
  for (size_t i = 0, n = aop_pool_registry_size(); i < n; ++i) {
    aop_pool_stats s;
    if (aop_pool_registry_stats(i, &s)) out.append(stats_dict(s));
  }
  return out;
}

void trim_default_pool() {
  py::gil_scoped_release nogil;  // the deallocator runs here
  aop_pool_trim(aop_default_pool());
}

class HeldBlock {
 public:
  explicit HeldBlock(aop::Block block) : block_(std::move(block)) {}
  size_t size() const { return live().size(); }
  uintptr_t address() const { return reinterpret_cast<uintptr_t>(live().data()); }
  void release() {
    py::gil_scoped_release nogil;
    block_.reset();
  }

 private:
  const aop::Block& live() const {
    if (!block_) throw aop::Error(AOP_VALUE_ERROR, "the block was released");
    return block_;
  }
  aop::Block block_;
};

HeldBlock acquire_default_block(size_t bytes) {
  aop::Pool pool = aop::Pool::borrow(aop_default_pool());
  py::gil_scoped_release nogil;  // the allocator runs here
  return HeldBlock(pool.acquire(bytes));
}

}  // namespace

void bind_pools(py::module_& m) {
  py::class_<HeldBlock>(m, "Block", "A block of the default workspace pool, held until release().")
      .def_property_readonly("size", &HeldBlock::size)
      .def_property_readonly("address", &HeldBlock::address)
      .def("release", &HeldBlock::release);
  m.def("acquire_default_block", &acquire_default_block, py::arg("bytes"),
        "Holds a block of at least `bytes` from the default pool (MemoryError past its bound).");
  m.def("pool_stats", &pool_stats, "Counters of every live pool, the default pool first.");
  m.def("trim_default_pool", &trim_default_pool, "Frees every cached block of the default pool.");
}

}  // namespace aop_runtime
