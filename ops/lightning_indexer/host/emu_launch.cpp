// run_emu: the AscendC kernel itself, run on CPU by common's emulator, on NumPy arrays. The
// host's synchronous checks, then the kernel with its own check phase (check slots in front of the
// workspace and a zeroed error record): an error the kernel reports and the host did not is an
// internal error. host_data_checks=False (tests only) skips the host's data checks (check_data),
// so the kernel's record is raised as the exception. The outputs and the launch report go back to
// Python.
#include "host/core_module.h"

#ifdef AOP_WITH_EMU
#include <cstdint>
#include <algorithm>
#include <limits>
#include <vector>

#include "ascend_ops/error.hpp"
#include "ascend_ops/numpy_view.hpp"
#include "ascend_ops/platform.hpp"
#include "ascend_ops/tensor.hpp"
#include "ascendc_cpu/launch.h"
#include "ascendc_cpu/pybind_report.h"
#include "host/emu_kernel.h"

namespace py = pybind11;

namespace aop::lightning_indexer {
namespace {

uint64_t bytes_of(const aop_tensor& t) {  // every tensor here is contiguous
  return static_cast<uint64_t>(TensorView(t).numel()) * aop_dtype_size(t.dtype);
}

void* data_or_null(const std::optional<aop_tensor>& t) { return t ? t->data : nullptr; }

// 64-byte aligned bytes (a check slot / the record is one data-cache line), filled with `fill`.
struct LineBuffer {
  LineBuffer(size_t bytes, uint8_t fill) : storage(bytes + 64, fill) {}
  uint8_t* data() {
    return storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
  }
  std::vector<uint8_t> storage;
};

// Writes the outputs of `a`; returns the launch report (empty when there is nothing to launch).
py::dict run_emu(Args& a, const std::string& soc, const std::string& order, uint64_t seed, bool host_data_checks) {
  const Dims d = validate(a);
  if (host_data_checks) check_data(a, d);
  check_npu_limits(a, d);
  const Platform platform = platform_preset(soc);
  LightningIndexerTiling t = kernel_tiling(a, d, platform);
  if (t.items == 0 || TensorView(a.sparse_indices).numel() == 0) return py::dict();
  // The check slots (garbage: they need no zeroing), then two GM score slots per AIC and (split
  // decode) the partial top-k lists, filled with NaN, not zero: the NPU pool hands out
  // uninitialised memory, and the kernel must never rank a byte it did not write.
  const size_t check_bytes = kernel_check_bytes(t), workspace_bytes = kernel_workspace_bytes(t);
  LineBuffer workspace(workspace_bytes, 0xA5);
  float* scores = reinterpret_cast<float*>(workspace.data() + check_bytes);
  std::fill(scores, scores + t.workspace_floats, std::numeric_limits<float>::quiet_NaN());
  LineBuffer record(kLiCheckWords * sizeof(int64_t), 0);

  using ascendc_cpu::GmKind;
  ascendc_cpu::GmRegions regions;
  const auto add = [&](const void* p, uint64_t bytes, const char* name, GmKind kind) {
    if (p != nullptr && bytes > 0) regions.push_back({p, bytes, name, kind});
  };
  add(a.query.data, bytes_of(a.query), "query", GmKind::kInput);
  add(a.key.data, bytes_of(a.key), "key", GmKind::kInput);
  add(a.weights.data, bytes_of(a.weights), "weights", GmKind::kInput);
  if (a.actual_seq_lengths_query) {
    add(a.actual_seq_lengths_query->data, bytes_of(*a.actual_seq_lengths_query), "actual_seq_lengths_query",
        GmKind::kInput);
  }
  if (a.actual_seq_lengths_key) {
    add(a.actual_seq_lengths_key->data, bytes_of(*a.actual_seq_lengths_key), "actual_seq_lengths_key",
        GmKind::kInput);
  }
  if (a.block_table) add(a.block_table->data, bytes_of(*a.block_table), "block_table", GmKind::kInput);
  add(a.sparse_indices.data, bytes_of(a.sparse_indices), "sparse_indices", GmKind::kOutput);
  if (a.sparse_values) add(a.sparse_values->data, bytes_of(*a.sparse_values), "sparse_values", GmKind::kOutput);
  add(workspace.data(), workspace_bytes, "workspace", GmKind::kWorkspace);
  add(record.data(), kLiCheckWords * sizeof(int64_t), "error_record", GmKind::kOutput);
  add(&t, sizeof(t), "tiling", GmKind::kInput);

  const KernelArgs kernel{a.query.data, a.key.data, a.weights.data, data_or_null(a.actual_seq_lengths_query),
                          data_or_null(a.actual_seq_lengths_key), data_or_null(a.block_table), a.sparse_indices.data,
                          data_or_null(a.sparse_values), workspace.data(), record.data(), &t};
  ascendc_cpu::LaunchReport report;
  {
    const ascendc_cpu::Order run_order = ascendc_cpu::python::ParseOrder(order, "lightning_indexer");
    py::gil_scoped_release release;
    report = emulate_kernel(kernel, t.block_dim, platform, regions, run_order, seed);
  }
  const auto* words = reinterpret_cast<const int64_t*>(record.data());
  if (words[0] != kLiOk) {
    const aop::Error error = kernel_error(words);
    if (!host_data_checks) throw error;
    throw aop::Error(AOP_RUNTIME_ERROR, std::string("lightning_indexer: internal: host and kernel checks disagree: "
                                                    "the host's checks passed, the kernel reports: ") + error.what());
  }
  return ascendc_cpu::python::ReportToDict(report);
}

}  // namespace

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
        py::dict report = run_emu(a, soc, order, seed, host_data_checks);
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
