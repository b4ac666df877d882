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

namespace {

aop_tensor optional_view(const py::object& a, const char* name, bool writable, const std::string& dtype) {
  if (a.is_none()) return aop_tensor{};
  if (!py::isinstance<py::array>(a)) {
    throw aop::Error(AOP_TYPE_ERROR, std::string("reshape_and_cache: ") + name +
                                         " should be a numpy.ndarray or None but is " +
                                         std::string(py::str(py::type::of(a).attr("__name__"))));
  }
  return numpy_view(a.cast<py::array>(), "reshape_and_cache", name, writable, dtype);
}

}  // namespace

Args numpy_args(const py::array& key, const py::object& value, const py::array& key_cache,
                const py::object& value_cache, const py::array& slot_mapping, const std::string& dtype,
                int64_t cache_mode, int64_t head_num) {
  constexpr const char* op = "reshape_and_cache";
  Args args{numpy_view(key, op, "key", false, dtype), optional_view(value, "value", false, dtype),
            numpy_view(key_cache, op, "key_cache", true, dtype),
            optional_view(value_cache, "value_cache", true, dtype),
            numpy_view(slot_mapping, op, "slot_mapping", false)};
  args.has_value = !value.is_none();
  args.has_value_cache = !value_cache.is_none();
  args.cache_mode = static_cast<int32_t>(cache_mode == static_cast<int32_t>(cache_mode) ? cache_mode : -1);
  args.head_num = head_num;
  return args;
}

}  // namespace aop::reshape_and_cache

PYBIND11_MODULE(_core, m) {
  m.doc() = "reshape_and_cache on NumPy arrays: the cpu and emu backends";
  aop::set_module_info(m);
  aop::register_error_translator();
  m.attr("HAS_EMU") = aop::reshape_and_cache::kHasEmu;

  m.def(
      "run_cpu",
      [](const py::array& key, const py::object& value, py::array key_cache, const py::object& value_cache,
         const py::array& slot_mapping, const std::string& dtype, int64_t cache_mode, int64_t head_num) {
        const Args args = aop::reshape_and_cache::numpy_args(key, value, key_cache, value_cache,
                                                             slot_mapping, dtype, cache_mode, head_num);
        py::gil_scoped_release release;
        aop::reshape_and_cache::run_cpu(args);
      },
      py::arg("key"), py::arg("value").none(true), py::arg("key_cache"), py::arg("value_cache").none(true),
      py::arg("slot_mapping"), py::arg("dtype") = "", py::arg("cache_mode") = 0, py::arg("head_num") = 0,
      "Writes key/value rows into the caches in place (multi-threaded C++ kernel).\n"
      "dtype='bfloat16' reads uint16 arrays as bfloat16 bit patterns.");

  m.def(
      "tiling",
      [](const py::array& key, const py::object& value, py::array key_cache, const py::object& value_cache,
         const py::array& slot_mapping, const std::string& soc, const std::string& dtype, int64_t cache_mode,
         int64_t head_num) {
        const Args args = aop::reshape_and_cache::validated(aop::reshape_and_cache::numpy_args(
            key, value, key_cache, value_cache, slot_mapping, dtype, cache_mode, head_num));
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
        d["block_size"] = t.block_size;
        d["has_value"] = t.has_value;
        d["cache_mode"] = t.cache_mode;
        return d;
      },
      py::arg("key"), py::arg("value").none(true), py::arg("key_cache"), py::arg("value_cache").none(true),
      py::arg("slot_mapping"), py::arg("soc") = "Ascend910B2", py::arg("dtype") = "",
      py::arg("cache_mode") = 0, py::arg("head_num") = 0,
      "The kernel launch tiling for a platform preset, as a dict.");

  aop::reshape_and_cache::bind_emu(m);
  aop::reshape_and_cache::bind_npu_sim(m);
}
