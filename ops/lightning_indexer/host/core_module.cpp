// `_core`: the framework-free front door on NumPy arrays (the cpu and emu backends), used by the
// Python API for NumPy inputs, by the golden tests and by the benchmarks.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "ascend_ops/module_info.hpp"
#include "ascend_ops/numpy_view.hpp"
#include "ascend_ops/parallel.h"
#include "ascend_ops/platform.hpp"
#include "host/core_module.h"
#include "host/cpu_kernel.h"
#include "host/score_keys.h"

namespace py = pybind11;

namespace aop::lightning_indexer {
namespace {

constexpr const char* kOp = "lightning_indexer";

std::optional<aop_tensor> optional_view(const std::optional<py::array>& a, const char* name) {
  if (!a) return std::nullopt;
  return numpy_view(*a, kOp, name, false);
}

}  // namespace

Args numpy_args(const py::array& query, const py::array& key, const py::array& weights,
                const std::optional<py::array>& lengths_q, const std::optional<py::array>& lengths_k,
                const std::optional<py::array>& block_table, const std::string& layout_query,
                const std::string& layout_key, int64_t sparse_count, int64_t sparse_mode, const std::string& dtype) {
  Args a;
  a.layout_query = parse_layout(layout_query, "layout_query", false);
  a.layout_key = parse_layout(layout_key, "layout_key", true);
  a.query = numpy_view(query, kOp, "query", false, dtype);
  a.key = numpy_view(key, kOp, "key", false, dtype);
  // weights may be float32 beside bfloat16 bit patterns
  const bool weights_bits = !dtype.empty() && weights.dtype().kind() == 'u';
  a.weights = numpy_view(weights, kOp, "weights", false, weights_bits ? dtype : "");
  a.actual_seq_lengths_query = optional_view(lengths_q, "actual_seq_lengths_query");
  a.actual_seq_lengths_key = optional_view(lengths_k, "actual_seq_lengths_key");
  a.block_table = optional_view(block_table, "block_table");
  a.sparse_count = sparse_count;
  a.sparse_mode = sparse_mode;
  return a;
}

}  // namespace aop::lightning_indexer

PYBIND11_MODULE(_core, m) {
  using namespace aop::lightning_indexer;
  m.doc() = "lightning_indexer on NumPy arrays: the cpu and emu backends";
  aop::set_module_info(m);
  aop::register_error_translator();
  m.attr("HAS_EMU") = kHasEmu;
  m.attr("CPU_ISA") = score_row_isa();
  // True where bfloat16 keys are scored by the AVX512_BF16 key-major kernel (host/score_keys.cpp).
  m.attr("CPU_BF16_KERNEL") = select_score_keys_bf16() != nullptr;
  m.def("num_threads", &aop_num_threads, "Worker threads of the CPU kernels (common's pool).");
  m.def("set_num_threads", &aop_set_num_threads, py::arg("threads"),
        "Set common's worker count; <= 0 restores the default (tests, benchmarks).");

  m.def(
      "run_cpu",
      [](const py::array& query, const py::array& key, const py::array& weights,
         const std::optional<py::array>& lengths_q, const std::optional<py::array>& lengths_k,
         const std::optional<py::array>& block_table, const std::string& layout_query, const std::string& layout_key,
         int64_t sparse_count, int64_t sparse_mode, bool return_value, const std::string& dtype) {
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
        {
          py::gil_scoped_release release;
          run_cpu(a);
        }
        return py::make_tuple(indices, values);
      },
      py::arg("query"), py::arg("key"), py::arg("weights"), py::arg("actual_seq_lengths_query") = py::none(),
      py::arg("actual_seq_lengths_key") = py::none(), py::arg("block_table") = py::none(),
      py::arg("layout_query") = "BSND", py::arg("layout_key") = "PA_BSND", py::arg("sparse_count") = 2048,
      py::arg("sparse_mode") = 3, py::arg("return_value") = false, py::arg("dtype") = "",
      "Top-sparse_count key indices per query row (multi-threaded fused C++ kernel); returns\n"
      "(sparse_indices int32, sparse_values float32 or None). dtype='bfloat16' reads uint16\n"
      "arrays as bfloat16 bit patterns.");

  m.def(
      "cpu_plan",
      [](const py::array& query, const py::array& key, const py::array& weights,
         const std::optional<py::array>& lengths_q, const std::optional<py::array>& lengths_k,
         const std::optional<py::array>& block_table, const std::string& layout_query, const std::string& layout_key,
         int64_t sparse_count, int64_t sparse_mode, const std::string& dtype) {
        const Args a = numpy_args(query, key, weights, lengths_q, lengths_k, block_table, layout_query, layout_key,
                                  sparse_count, sparse_mode, dtype);
        const Dims d = validate(a, false);
        const CpuPlan p = cpu_plan(a, d);
        py::dict out;
        out["key_tile"] = p.key_tile;
        out["row_block"] = p.row_block;
        out["key_chunk"] = p.key_chunk;
        out["threads"] = p.threads;
        out["isa"] = score_row_isa();
        out["bf16_kernel"] = a.query.dtype == AOP_DTYPE_BFLOAT16 && d.head_dim % 2 == 0 &&
                             select_score_keys_bf16() != nullptr;
        return out;
      },
      py::arg("query"), py::arg("key"), py::arg("weights"), py::arg("actual_seq_lengths_query") = py::none(),
      py::arg("actual_seq_lengths_key") = py::none(), py::arg("block_table") = py::none(),
      py::arg("layout_query") = "BSND", py::arg("layout_key") = "PA_BSND", py::arg("sparse_count") = 2048,
      py::arg("sparse_mode") = 3, py::arg("dtype") = "",
      "How the CPU kernel splits the work for these inputs (from the tiling cache), as a dict.");

  m.def(
      "kernel_tiling",
      [](const py::array& query, const py::array& key, const py::array& weights,
         const std::optional<py::array>& lengths_q, const std::optional<py::array>& lengths_k,
         const std::optional<py::array>& block_table, const std::string& layout_query, const std::string& layout_key,
         int64_t sparse_count, int64_t sparse_mode, bool return_value, const std::string& soc,
         const std::string& dtype) {
        Args a = numpy_args(query, key, weights, lengths_q, lengths_k, block_table, layout_query, layout_key,
                            sparse_count, sparse_mode, dtype);
        if (return_value) a.sparse_values = aop_tensor{};  // only its presence matters here
        const Dims d = validate(a, false);
        check_npu_limits(a, d);
        const LightningIndexerTiling t = kernel_tiling(a, d, aop::platform_preset(soc));
        py::dict out;
        out["rows_per_group"] = t.rows_per_group;
        out["m_pad"] = t.m_pad;
        out["tile_keys"] = t.tile_keys;
        out["rows_per_aiv"] = t.rows_per_aiv;
        out["block_keys"] = t.block_keys;
        out["block_pad"] = t.block_pad;
        out["fix_keys"] = t.fix_keys;
        out["c_buffers"] = t.c_buffers;
        out["head_chunk"] = t.head_chunk;
        out["k_pad"] = t.k_pad;
        out["groups_per_batch"] = t.groups_per_batch;
        out["items"] = t.items;
        out["splits"] = t.splits;
        out["halves"] = t.halves;
        out["slots"] = t.slots;
        out["merge_pairs"] = t.merge_pairs;
        out["units"] = t.units;
        out["block_dim"] = t.block_dim;
        out["items_per_core"] = t.items_per_core;
        out["cores_with_extra"] = t.cores_with_extra;
        out["slot_floats"] = t.slot_floats;
        out["workspace_per_aic"] = t.workspace_per_aic;
        out["workspace_floats"] = t.workspace_floats;
        out["ub_bytes"] = kernel_ub_bytes(t);
        return out;
      },
      py::arg("query"), py::arg("key"), py::arg("weights"), py::arg("actual_seq_lengths_query") = py::none(),
      py::arg("actual_seq_lengths_key") = py::none(), py::arg("block_table") = py::none(),
      py::arg("layout_query") = "BSND", py::arg("layout_key") = "PA_BSND", py::arg("sparse_count") = 2048,
      py::arg("sparse_mode") = 3, py::arg("return_value") = false, py::arg("soc") = "Ascend910B2",
      py::arg("dtype") = "",
      "The AscendC kernel's launch tiling for these inputs on a platform preset (from the tiling\n"
      "cache), as a dict, with the UB bytes it allocates.");

  bind_emu(m);
  bind_npu_sim(m);
}
