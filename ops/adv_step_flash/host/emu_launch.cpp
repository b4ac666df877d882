// run_emu: the AscendC kernel itself, run on CPU by common's emulator, on NumPy arrays. The
// same host checks and tiling as the NPU path; the launch report goes back to Python.
#include "host/core_module.h"

#ifdef AOP_WITH_EMU
#include <cstdint>
#include <string>

#include "ascend_ops/platform.hpp"
#include "ascend_ops/tensor.hpp"
#include "ascendc_cpu/launch.h"
#include "ascendc_cpu/pybind_report.h"
#include "host/emu_kernel.h"

namespace py = pybind11;

namespace aop::adv_step_flash {
namespace {

py::dict run_emu(const Args& a, const std::string& soc, const std::string& order, uint64_t seed) {
  validate(a);
  check_data(a);
  const Platform platform = platform_preset(soc);
  AdvStepFlashTiling t = tiling(a, platform);

  using ascendc_cpu::GmKind;
  ascendc_cpu::GmRegions regions{
      {a.input_tokens.data, TensorView(a.input_tokens).span_bytes(), "input_tokens", GmKind::kOutput},
      {a.sampled_token_ids.data, TensorView(a.sampled_token_ids).span_bytes(), "sampled_token_ids", GmKind::kInput},
      {a.input_positions.data, TensorView(a.input_positions).span_bytes(), "input_positions", GmKind::kOutput},
      {a.seq_lens.data, TensorView(a.seq_lens).span_bytes(), "seq_lens", GmKind::kOutput},
      {a.slot_mapping.data, TensorView(a.slot_mapping).span_bytes(), "slot_mapping", GmKind::kOutput},
      {&t, sizeof(t), "tiling", GmKind::kInput},
  };
  const size_t table_bytes = TensorView(a.block_tables).span_bytes();
  if (table_bytes > 0) {  // an empty table has nothing to register
    regions.push_back({a.block_tables.data, table_bytes, "block_tables", GmKind::kInput});
  }
  const KernelArgs kernel{a.input_tokens.data, a.sampled_token_ids.data, a.input_positions.data, a.seq_lens.data,
                          a.slot_mapping.data, a.block_tables.data, &t};
  const ascendc_cpu::Order run_order = ascendc_cpu::python::ParseOrder(order, "advance_step_flashattn");
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
      [](int64_t num_seqs, int64_t num_queries, int64_t block_size, py::array input_tokens,
         const py::array& sampled_token_ids, py::array input_positions, py::array seq_lens, py::array slot_mapping,
         const py::array& block_tables, const std::string& soc, const std::string& order, uint64_t seed) {
        return run_emu(numpy_args(num_seqs, num_queries, block_size, input_tokens, sampled_token_ids,
                                  input_positions, seq_lens, slot_mapping, block_tables),
                       soc, order, seed);
      },
      py::arg("num_seqs"), py::arg("num_queries"), py::arg("block_size"), py::arg("input_tokens"),
      py::arg("sampled_token_ids"), py::arg("input_positions"), py::arg("seq_lens"), py::arg("slot_mapping"),
      py::arg("block_tables"), py::arg("soc") = "Ascend910B2", py::arg("order") = "both", py::arg("seed") = 0,
      "Runs the AscendC kernel through the emulator on a platform preset, writing the outputs in\n"
      "place; order 'both' runs the blocks in order and shuffled and checks they agree.\n"
      "Returns the launch report (GM bytes, DMA transfers, UB high-water mark per block).");
}

}  // namespace aop::adv_step_flash

#else  // the emulator build is off: say so instead of pretending

namespace aop::adv_step_flash {
void bind_emu(pybind11::module_&) {}
}  // namespace aop::adv_step_flash

#endif
