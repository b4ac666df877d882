// run_emu: the AscendC kernel itself, run on CPU by common's emulator, on NumPy arrays. The
// same host checks and tiling as the NPU path; the outputs and the launch report go back to
// Python.
#include "host/core_module.h"

#ifdef AOP_WITH_EMU
#include <cstdint>
#include <limits>
#include <vector>

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

// Writes the outputs of `a`; returns the launch report (empty when there is nothing to launch).
py::dict run_emu(Args& a, const std::string& soc, const std::string& order, uint64_t seed) {
  const Dims d = validate(a);
  check_data(a, d);
  check_npu_limits(a, d);
  const Platform platform = platform_preset(soc);
  LightningIndexerTiling t = kernel_tiling(a, d, platform);
  if (t.items == 0 || TensorView(a.sparse_indices).numel() == 0) return py::dict();
  // Two GM score slots per AIC, then (split decode) the partial top-k lists. Filled with NaN, not zero: the NPU pool hands out uninitialised
  // memory, and the kernel must never rank a byte it did not write.
  std::vector<float> workspace(static_cast<size_t>(t.workspace_floats),
                               std::numeric_limits<float>::quiet_NaN());

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
  add(workspace.data(), workspace.size() * sizeof(float), "workspace", GmKind::kWorkspace);
  add(&t, sizeof(t), "tiling", GmKind::kInput);

  const KernelArgs kernel{a.query.data, a.key.data, a.weights.data, data_or_null(a.actual_seq_lengths_query),
                          data_or_null(a.actual_seq_lengths_key), data_or_null(a.block_table), a.sparse_indices.data,
                          data_or_null(a.sparse_values), workspace.data(), &t};
  const ascendc_cpu::Order run_order = ascendc_cpu::python::ParseOrder(order, "lightning_indexer");
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
      [](const py::array& query, const py::array& key, const py::array& weights,
         const std::optional<py::array>& lengths_q, const std::optional<py::array>& lengths_k,
         const std::optional<py::array>& block_table, const std::string& layout_query, const std::string& layout_key,
         int64_t sparse_count, int64_t sparse_mode, bool return_value, const std::string& soc,
         const std::string& order, uint64_t seed, const std::string& dtype) {
        Args a = numpy_args(query, key, weights, lengths_q, lengths_k, block_table, layout_query, layout_key,
                            sparse_count, sparse_mode, dtype);
        validate(a, false);
        const std::vector<int64_t> shape = output_shape(a);
        py::array_t<int32_t> indices(shape);
        a.sparse_indices = aop::numpy_view(indices, "lightning_indexer", "sparse_indices", true);
        py::object values = py::none();
        if (return_value) {
          py::array_t<float> v(shape);
          a.sparse_values = aop::numpy_view(v, "lightning_indexer", "sparse_values", true);
          values = v;
        }
        py::dict report = run_emu(a, soc, order, seed);
        return py::make_tuple(indices, values, report);
      },
      py::arg("query"), py::arg("key"), py::arg("weights"), py::arg("actual_seq_lengths_query") = py::none(),
      py::arg("actual_seq_lengths_key") = py::none(), py::arg("block_table") = py::none(),
      py::arg("layout_query") = "BSND", py::arg("layout_key") = "PA_BSND", py::arg("sparse_count") = 2048,
      py::arg("sparse_mode") = 3, py::arg("return_value") = false, py::arg("soc") = "Ascend910B2",
      py::arg("order") = "both", py::arg("seed") = 0, py::arg("dtype") = "",
      "Runs the AscendC kernel through the emulator on a platform preset; order 'both' runs the\n"
      "blocks in order and shuffled and checks they agree. Returns (sparse_indices int32,\n"
      "sparse_values float32 or None, launch report dict: GM bytes, DMA transfers, cube MACs,\n"
      "UB high-water mark per block).");
}

}  // namespace aop::lightning_indexer

#else  // the emulator build is off: no run_emu

namespace aop::lightning_indexer {
void bind_emu(pybind11::module_&) {}
}  // namespace aop::lightning_indexer

#endif
