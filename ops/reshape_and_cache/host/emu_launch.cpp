// run_emu: the AscendC kernel itself, run on CPU by common's emulator, on NumPy arrays. The
// host's synchronous checks, then the kernel with its own check phase (a workspace of check slots
// and a zeroed error record): an error the kernel reports and the host did not is an internal
// error. host_data_checks=False (tests only) skips the host's data checks (check_slots), so the
// kernel's record is raised as the exception. The launch report goes back to Python.
#include "host/core_module.h"

#ifdef AOP_WITH_EMU
#include <cstdint>
#include <vector>

#include "ascend_ops/error.hpp"
#include "ascend_ops/platform.hpp"
#include "ascend_ops/tensor.hpp"
#include "ascendc_cpu/launch.h"
#include "ascendc_cpu/pybind_report.h"
#include "host/emu_kernel.h"

namespace py = pybind11;

namespace aop::reshape_and_cache {
namespace {

// 64-byte aligned bytes (a check slot / the record is one data-cache line), filled with `fill`.
struct LineBuffer {
  LineBuffer(size_t bytes, uint8_t fill) : storage(bytes + 64, fill) {}
  uint8_t* data() {
    return storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
  }
  std::vector<uint8_t> storage;
};

py::dict run_emu(const Args& args, const std::string& soc, const std::string& order, uint64_t seed,
                 bool host_data_checks) {
  const Args a = validated(args);
  if (host_data_checks) check_slots(a);
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
  // The check slots need no zeroing: fill them with garbage, as an NPU pool would hand them out.
  const size_t workspace_bytes = kernel_workspace_bytes(t);
  LineBuffer workspace(workspace_bytes, 0xA5);
  LineBuffer record(kRacCheckWords * sizeof(int64_t), 0);
  regions.push_back({workspace.data(), workspace_bytes, "workspace", GmKind::kWorkspace});
  regions.push_back({record.data(), kRacCheckWords * sizeof(int64_t), "error_record", GmKind::kOutput});
  if (a.has_value) {  // key-only: the kernel gets null pointers it never touches
    regions.push_back({a.value.data, TensorView(a.value).span_bytes(), "value", GmKind::kInput});
    regions.push_back({a.value_cache.data, TensorView(a.value_cache).span_bytes(), "value_cache", GmKind::kOutput});
  }
  void* value = a.has_value ? a.value.data : nullptr;
  void* value_cache = a.has_value ? a.value_cache.data : nullptr;
  const KernelArgs kernel{a.key.data, value, a.key_cache.data, value_cache, a.slot_mapping.data,
                          workspace.data(), record.data(), &t};
  ascendc_cpu::LaunchReport report;
  {
    const ascendc_cpu::Order run_order = ascendc_cpu::python::ParseOrder(order, "reshape_and_cache");
    py::gil_scoped_release release;
    report = emulate_kernel(kernel, t.block_dim, platform, regions, run_order, seed);
  }
  const auto* words = reinterpret_cast<const int64_t*>(record.data());
  if (words[0] != kRacOk) {
    const aop::Error error = kernel_error(words);
    if (!host_data_checks) throw error;
    throw aop::Error(AOP_RUNTIME_ERROR, std::string("reshape_and_cache: internal: host and kernel checks disagree: "
                                                    "the host's checks passed, the kernel reports: ") + error.what());
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
         uint64_t seed, const std::string& dtype, int64_t cache_mode, int64_t head_num, bool host_data_checks) {
        return run_emu(numpy_args(key, value, key_cache, value_cache, slot_mapping, dtype, cache_mode, head_num),
                       soc, order, seed, host_data_checks);
      },
      py::arg("key"), py::arg("value").none(true), py::arg("key_cache"), py::arg("value_cache").none(true),
      py::arg("slot_mapping"), py::arg("soc") = "Ascend910B2", py::arg("order") = "both",
      py::arg("seed") = 0, py::arg("dtype") = "", py::arg("cache_mode") = 0, py::arg("head_num") = 0,
      py::arg("host_data_checks") = true,
      "Runs the AscendC kernel through the emulator on a platform preset, writing the caches in\n"
      "place; order 'both' runs the blocks in order and shuffled and checks they agree.\n"
      "host_data_checks=False (tests only) skips the host's slot check: the kernel's own check\n"
      "raises the error (the caches untouched).\n"
      "Returns the launch report (GM bytes, DMA transfers, UB high-water mark per block).");
}

}  // namespace aop::reshape_and_cache

#else  // the emulator build is off: say so instead of pretending

namespace aop::reshape_and_cache {
void bind_emu(pybind11::module_&) {}
}  // namespace aop::reshape_and_cache

#endif
