// `_core`: the framework-free front door on NumPy arrays (cpu and emu backends), used by the
// Python API for NumPy inputs, by the golden tests and by the benchmarks.
#include <pybind11/pybind11.h>

#include "ascend_ops/module_info.hpp"
#include "ascend_ops/numpy_view.hpp"
#include "ascend_ops/platform.hpp"
#include "host/core_module.h"
#include "host/reshape_and_cache.h"

namespace py = pybind11;
using aop::reshape_and_cache::Args;

namespace aop::reshape_and_cache {

Args numpy_args(const py::array& key, const py::array& value, const py::array& key_cache,
                const py::array& value_cache, const py::array& slot_mapping, const std::string& dtype) {
  constexpr const char* op = "reshape_and_cache";
  return Args{numpy_view(key, op, "key", false, dtype), numpy_view(value, op, "value", false, dtype),
              numpy_view(key_cache, op, "key_cache", true, dtype),
              numpy_view(value_cache, op, "value_cache", true, dtype),
              numpy_view(slot_mapping, op, "slot_mapping", false)};
}

}  // namespace aop::reshape_and_cache

PYBIND11_MODULE(_core, m) {
  m.doc() = "reshape_and_cache on NumPy arrays: the cpu and emu backends";
  aop::set_module_info(m);
  aop::register_error_translator();
  m.attr("HAS_EMU") = aop::reshape_and_cache::kHasEmu;

  m.def(
      "run_cpu",
      [](const py::array& key, const py::array& value, py::array key_cache, py::array value_cache,
         const py::array& slot_mapping, const std::string& dtype) {
        const Args args = aop::reshape_and_cache::numpy_args(key, value, key_cache, value_cache,
                                                             slot_mapping, dtype);
        py::gil_scoped_release release;
        aop::reshape_and_cache::run_cpu(args);
      },
      py::arg("key"), py::arg("value"), py::arg("key_cache"), py::arg("value_cache"),
      py::arg("slot_mapping"), py::arg("dtype") = "",
      "Writes key/value rows into the caches in place (multi-threaded C++ kernel).\n"
      "dtype='bfloat16' reads uint16 arrays as bfloat16 bit patterns.");

  m.def(
      "tiling",
      [](const py::array& key, const py::array& value, py::array key_cache, py::array value_cache,
         const py::array& slot_mapping, const std::string& soc, const std::string& dtype) {
        const Args args = aop::reshape_and_cache::numpy_args(key, value, key_cache, value_cache,
                                                             slot_mapping, dtype);
        aop::reshape_and_cache::validate(args);
        const auto t = aop::reshape_and_cache::tiling(args, aop::platform_preset(soc));
        py::dict d;
        d["num_tokens"] = t.num_tokens;
        d["key_row_elems"] = t.key_row_elems;
        d["value_row_elems"] = t.value_row_elems;
        d["key_token_stride"] = t.key_token_stride;
        d["value_token_stride"] = t.value_token_stride;
        d["num_slots"] = t.num_slots;
        d["elem_bytes"] = t.elem_bytes;
        d["slot_bytes"] = t.slot_bytes;
        d["block_dim"] = t.block_dim;
        d["tokens_per_core"] = t.tokens_per_core;
        d["cores_with_extra"] = t.cores_with_extra;
        d["chunk_elems"] = t.chunk_elems;
        return d;
      },
      py::arg("key"), py::arg("value"), py::arg("key_cache"), py::arg("value_cache"),
      py::arg("slot_mapping"), py::arg("soc") = "Ascend910B2", py::arg("dtype") = "",
      "The kernel launch tiling for a platform preset, as a dict.");

  aop::reshape_and_cache::bind_emu(m);
}
