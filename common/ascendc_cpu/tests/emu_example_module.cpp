// _emu_example: runs the example add kernel through the emulator on NumPy arrays, the way an
// op module's run_emu does (host tiling -> Launch -> report dict).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "ascendc_cpu/launch.h"
#include "ascendc_cpu/pybind_report.h"
#include "kernels/add_kernel.h"

namespace py = pybind11;

namespace {

// x, y: [n] float32 -> (z: [n] float32, report)
py::tuple RunAdd(py::array_t<float, py::array::c_style | py::array::forcecast> x,
                 py::array_t<float, py::array::c_style | py::array::forcecast> y, const std::string& order,
                 uint64_t seed, uint32_t max_cores, int64_t ub_bytes, uint32_t tile) {
  if (x.ndim() != 1 || y.ndim() != 1 || x.shape(0) != y.shape(0)) {
    throw py::value_error("run_add: x and y should be 1-D of the same length");
  }
  const auto n = static_cast<uint32_t>(x.shape(0));
  py::array_t<float> z(n);
  AddTiling tiling{};
  const uint32_t blocks = AddTilingFor(n, sizeof(float), max_cores, static_cast<uint64_t>(ub_bytes), &tiling);
  if (tile != 0) tiling.tile = tile;  // lets tests break the tiling on purpose
  const uint64_t bytes = uint64_t{n} * sizeof(float);
  ascendc_cpu::LaunchConfig cfg;
  cfg.kernel_name = "add_custom_float";
  cfg.block_dim = static_cast<int32_t>(blocks);
  cfg.ub_bytes = ub_bytes;
  cfg.order = ascendc_cpu::python::ParseOrder(order);
  cfg.seed = seed;
  const float* xp = x.data();
  const float* yp = y.data();
  float* zp = z.mutable_data();
  const ascendc_cpu::GmRegions regions = {{xp, bytes, "x", ascendc_cpu::GmKind::kInput},
                                          {yp, bytes, "y", ascendc_cpu::GmKind::kInput},
                                          {zp, bytes, "z", ascendc_cpu::GmKind::kOutput},
                                          {&tiling, sizeof tiling, "tiling", ascendc_cpu::GmKind::kInput}};
  ascendc_cpu::LaunchReport rep;
  {
    py::gil_scoped_release no_gil;  // the kernel touches no Python object
    rep = ascendc_cpu::Launch(cfg, regions, add_custom_float, xp, yp, zp, &tiling);
  }
  return py::make_tuple(z, ascendc_cpu::python::ReportToDict(rep));
}

}  // namespace

PYBIND11_MODULE(_emu_example, m) {
  ascendc_cpu::python::RegisterEmulatorError(m);
  m.def("run_add", &RunAdd, py::arg("x"), py::arg("y"), py::kw_only(), py::arg("order") = "both",
        py::arg("seed") = 0, py::arg("max_cores") = 48, py::arg("ub_bytes") = 196608, py::arg("tile") = 0,
        "z = x + y through the emulated AscendC kernel; returns (z, report).");
}
