// run_emu: the AscendC kernel itself, run on CPU by common's emulator, on NumPy arrays. The
// same host checks and tiling as the NPU path; the launch report goes back to Python.
#include "host/core_module.h"

#ifdef AOP_WITH_EMU
#include <cstdint>

#include "ascend_ops/platform.hpp"
#include "ascend_ops/tensor.hpp"
#include "ascendc_cpu/launch.h"
#include "ascendc_cpu/pybind_report.h"
#include "host/emu_kernel.h"

namespace py = pybind11;

namespace aop::reshape_and_cache {
namespace {

py::dict run_emu(const Args& args, const std::string& soc, const std::string& order, uint64_t seed) {
  const Args a = validated(args);
  check_slots(a);
  const Platform platform = platform_preset(soc);
  ReshapeAndCacheTiling t = tiling(a, platform);
  if (t.num_tokens == 0) return py::dict();  // nothing to launch, like the NPU path

  using ascendc_cpu::GmKind;
  ascendc_cpu::GmRegions regions{
      {a.key.data, TensorView(a.key).span_bytes(), "key", GmKind::kInput},
      {a.key_cache.data, TensorView(a.key_cache).span_bytes(), "key_cache", GmKind::kOutput},
      {a.slot_mapping.data, TensorView(a.slot_mapping).span_bytes(), "slot_mapping", GmKind::kInput},
      {&t, sizeof(t), "tiling", GmKind::kInput},
  };
  if (a.has_value) {  // key-only: the kernel gets null pointers it never touches
    regions.push_back({a.value.data, TensorView(a.value).span_bytes(), "value", GmKind::kInput});
    regions.push_back({a.value_cache.data, TensorView(a.value_cache).span_bytes(), "value_cache", GmKind::kOutput});
  }
  const KernelArgs kernel{a.key.data, a.has_value ? a.value.data : nullptr, a.key_cache.data,
                          a.has_value ? a.value_cache.data : nullptr, a.slot_mapping.data, &t};
  const ascendc_cpu::Order run_order = ascendc_cpu::python::ParseOrder(order, "reshape_and_cache");
  ascendc_cpu::LaunchReport report;
  {
    py::gil_scoped_release release;
    report = emulate_kernel(kernel, t.block_dim, platform, regions, run_order, seed);
  }
  return ascendc_cpu::python::ReportToDict(report);
}

}  // namespace

void bind_emu(py::module_& m) {
  ascendc_cpu::python::RegisterEmulatorError(m);
  m.def(
      "run_emu",
      [](const py::array& key, const py::object& value, py::array key_cache, const py::object& value_cache,
         const py::array& slot_mapping, const std::string& soc, const std::string& order,
         uint64_t seed, const std::string& dtype, int64_t cache_mode, int64_t head_num) {
        return run_emu(numpy_args(key, value, key_cache, value_cache, slot_mapping, dtype, cache_mode, head_num),
                       soc, order, seed);
      },
      py::arg("key"), py::arg("value").none(true), py::arg("key_cache"), py::arg("value_cache").none(true),
      py::arg("slot_mapping"), py::arg("soc") = "Ascend910B2", py::arg("order") = "both",
      py::arg("seed") = 0, py::arg("dtype") = "", py::arg("cache_mode") = 0, py::arg("head_num") = 0,
      "Runs the AscendC kernel through the emulator on a platform preset, writing the caches in\n"
      "place; order 'both' runs the blocks in order and shuffled and checks they agree.\n"
      "Returns the launch report (GM bytes, DMA transfers, UB high-water mark per block).");
}

}  // namespace aop::reshape_and_cache

#else  // the emulator build is off: say so instead of pretending

namespace aop::reshape_and_cache {
void bind_emu(pybind11::module_&) {}
}  // namespace aop::reshape_and_cache

#endif
