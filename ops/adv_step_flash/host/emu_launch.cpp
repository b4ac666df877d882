// run_emu: the AscendC kernel itself, run on CPU by common's emulator (launch::run_emu), on NumPy
// arrays. The launch report goes back to Python.
#include "host/core_module.h"

#ifdef AOP_WITH_EMU
#include "ascend_ops/emu_pybind.hpp"
#include "op.h"

namespace py = pybind11;

namespace aop::adv_step_flash {

void bind_emu(py::module_& m) {
  ascendc_cpu::python::RegisterEmulatorError(m);
  m.def(
      "run_emu",
      [](int64_t num_seqs, int64_t num_queries, int64_t block_size, py::array input_tokens,
         const py::array& sampled_token_ids, py::array input_positions, py::array seq_lens, py::array slot_mapping,
         const py::array& block_tables, const std::string& soc, const std::string& order, uint64_t seed,
         bool host_data_checks) {
        return launch::run_emu_report<Op>(numpy_args(num_seqs, num_queries, block_size, input_tokens, sampled_token_ids,
                                  input_positions, seq_lens, slot_mapping, block_tables),
                       soc, order, seed, host_data_checks);
      },
      py::arg("num_seqs"), py::arg("num_queries"), py::arg("block_size"), py::arg("input_tokens"),
      py::arg("sampled_token_ids"), py::arg("input_positions"), py::arg("seq_lens"), py::arg("slot_mapping"),
      py::arg("block_tables"), py::arg("soc") = "Ascend910B2", py::arg("order") = "both", py::arg("seed") = 0,
      py::arg("host_data_checks") = true,
      "Runs the AscendC kernel through the emulator on a platform preset, writing the outputs in\n"
      "place; order 'both' runs the blocks in order and shuffled and checks they agree.\n"
      "host_data_checks=False (tests only) skips the host's data checks: the kernel's own check\n"
      "raises the error (the outputs untouched).\n"
      "Returns the launch report (GM bytes, DMA transfers, UB high-water mark per block).");
}

}  // namespace aop::adv_step_flash

#else  // the emulator build is off: say so instead of pretending

namespace aop::adv_step_flash {
void bind_emu(pybind11::module_&) {}
}  // namespace aop::adv_step_flash

#endif
