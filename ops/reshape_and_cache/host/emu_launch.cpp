// run_emu: the AscendC kernel itself, run on CPU by common's emulator (launch::run_emu), on NumPy
// arrays. The launch report goes back to Python.
#include "host/core_module.h"

#ifdef AOP_WITH_EMU
#include "ascend_ops/emu_pybind.hpp"
#include "op.h"

namespace py = pybind11;

namespace aop::reshape_and_cache {

void bind_emu(py::module_& m) {
  ascendc_cpu::python::RegisterEmulatorError(m);
  m.def(
      "run_emu",
      [](const py::array& key, const py::object& value, py::array key_cache, const py::object& value_cache,
         const py::array& slot_mapping, const std::string& soc, const std::string& order,
         uint64_t seed, const std::string& dtype, int64_t cache_mode, int64_t head_num, bool host_data_checks) {
        return launch::run_emu_report<Op>(numpy_args(key, value, key_cache, value_cache, slot_mapping, dtype, cache_mode, head_num),
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
