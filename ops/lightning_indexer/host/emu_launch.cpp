// run_emu: the AscendC kernel itself, run on CPU by common's emulator (launch::run_emu), on NumPy
// arrays. The outputs and the launch report go back to Python.
#include "host/core_module.h"

#ifdef AOP_WITH_EMU
#include "ascend_ops/emu_pybind.hpp"
#include "ascend_ops/numpy_view.hpp"
#include "op.h"

namespace py = pybind11;

namespace aop::lightning_indexer {

void bind_emu(py::module_& m) {
  ascendc_cpu::python::RegisterEmulatorError(m);
  m.def(
      "run_emu",
      [](const py::array& query, const py::array& key, const py::array& weights,
         const std::optional<py::array>& lengths_q, const std::optional<py::array>& lengths_k,
         const std::optional<py::array>& block_table, const std::string& layout_query, const std::string& layout_key,
         int64_t sparse_count, int64_t sparse_mode, bool return_value, const std::string& soc,
         const std::string& order, uint64_t seed, const std::string& dtype, bool host_data_checks,
         const std::optional<py::array>& out_indices, const std::optional<py::array>& out_values) {
        Args a = numpy_args(query, key, weights, lengths_q, lengths_k, block_table, layout_query, layout_key,
                            sparse_count, sparse_mode, dtype);
        validate(a, false);
        const std::vector<int64_t> shape = output_shape(a);
        py::array indices = out_indices ? *out_indices : py::array(py::array_t<int32_t>(shape));
        a.sparse_indices = aop::numpy_view(indices, "lightning_indexer", "sparse_indices", true);
        py::object values = py::none();
        if (return_value) {
          py::array v = out_values ? *out_values : py::array(py::array_t<float>(shape));
          a.sparse_values = aop::numpy_view(v, "lightning_indexer", "sparse_values", true);
          values = v;
        }
        py::dict report = launch::run_emu_report<Op>(a, soc, order, seed, host_data_checks);
        return py::make_tuple(indices, values, report);
      },
      py::arg("query"), py::arg("key"), py::arg("weights"), py::arg("actual_seq_lengths_query") = py::none(),
      py::arg("actual_seq_lengths_key") = py::none(), py::arg("block_table") = py::none(),
      py::arg("layout_query") = "BSND", py::arg("layout_key") = "PA_BSND", py::arg("sparse_count") = 2048,
      py::arg("sparse_mode") = 3, py::arg("return_value") = false, py::arg("soc") = "Ascend910B2",
      py::arg("order") = "both", py::arg("seed") = 0, py::arg("dtype") = "", py::arg("host_data_checks") = true,
      py::arg("out_indices") = py::none(), py::arg("out_values") = py::none(),
      "Runs the AscendC kernel through the emulator on a platform preset; order 'both' runs the\n"
      "blocks in order and shuffled and checks they agree. Tests only: host_data_checks=False skips\n"
      "the host's data checks (the kernel's own check raises the error), out_indices / out_values\n"
      "are output arrays to write (checked by validate) instead of new ones. Returns (sparse_indices int32,\n"
      "sparse_values float32 or None, launch report dict: GM bytes, DMA transfers, cube MACs,\n"
      "UB high-water mark per block).");
}

}  // namespace aop::lightning_indexer

#else  // the emulator build is off: no run_emu

namespace aop::lightning_indexer {
void bind_emu(pybind11::module_&) {}
}  // namespace aop::lightning_indexer

#endif
