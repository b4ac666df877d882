// run_emu: the AscendC kernel itself, run on CPU by common's emulator, on NumPy arrays. The
// host's synchronous checks, then the kernel with its own check phase (a workspace of check slots
// and a zeroed error record): an error the kernel reports and the host did not is an internal
// error. host_data_checks=False (tests only) skips the host's data checks (check_data), so the
// kernel's record is raised as the exception. The launch report goes back to Python.
#include "host/core_module.h"

#ifdef AOP_WITH_EMU
#include <cstdint>
#include <string>
#include <vector>

#include "ascend_ops/error.hpp"
#include "ascend_ops/platform.hpp"
#include "ascend_ops/tensor.hpp"
#include "ascendc_cpu/launch.h"
#include "ascendc_cpu/pybind_report.h"
#include "host/emu_kernel.h"

namespace py = pybind11;

namespace aop::adv_step_flash {
namespace {

// 64-byte aligned bytes (a check slot / the record is one data-cache line), filled with `fill`.
struct LineBuffer {
  LineBuffer(size_t bytes, uint8_t fill) : storage(bytes + 64, fill) {}
  uint8_t* data() {
    return storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
  }
  std::vector<uint8_t> storage;
};

py::dict run_emu(const Args& a, const std::string& soc, const std::string& order, uint64_t seed,
                 bool host_data_checks) {
  validate(a);
  if (host_data_checks) check_data(a);
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
  // The check slots need no zeroing: fill them with garbage, as an NPU pool would hand them out.
  const size_t workspace_bytes = kernel_workspace_bytes(t);
  LineBuffer workspace(workspace_bytes, 0xA5);
  LineBuffer record(kAsfCheckWords * sizeof(int64_t), 0);
  regions.push_back({workspace.data(), workspace_bytes, "workspace", GmKind::kWorkspace});
  regions.push_back({record.data(), kAsfCheckWords * sizeof(int64_t), "error_record", GmKind::kOutput});
  const KernelArgs kernel{a.input_tokens.data, a.sampled_token_ids.data, a.input_positions.data, a.seq_lens.data,
                          a.slot_mapping.data, a.block_tables.data, workspace.data(), record.data(), &t};
  ascendc_cpu::LaunchReport report;
  {
    const ascendc_cpu::Order run_order = ascendc_cpu::python::ParseOrder(order, "advance_step_flashattn");
    py::gil_scoped_release release;
    report = emulate_kernel(kernel, t.block_dim, platform, regions, run_order, seed);
  }
  const auto* words = reinterpret_cast<const int64_t*>(record.data());
  if (words[0] != kAsfOk) {
    const aop::Error error = kernel_error(words);
    if (!host_data_checks) throw error;
    throw aop::Error(AOP_RUNTIME_ERROR, std::string("advance_step_flashattn: internal: host and kernel checks "
                                                    "disagree: the host's checks passed, the kernel reports: ") +
                                            error.what());
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
         const py::array& block_tables, const std::string& soc, const std::string& order, uint64_t seed,
         bool host_data_checks) {
        return run_emu(numpy_args(num_seqs, num_queries, block_size, input_tokens, sampled_token_ids,
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
