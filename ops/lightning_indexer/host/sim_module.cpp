// run_npu_sim: the NPU host path (run_npu) on common's simulated Ascend runtime, for tests and
// benchmarks. The arrays (outputs included: sparse_indices, sparse_values or None) wrap
// simulated device memory (ascend_ops.common.ascend_sim); `stream` is a simulated aclrtStream.
// Nothing is read or written by the host: the kernel runs on the stream's thread.
#include "host/core_module.h"

#ifdef AOP_WITH_NPU_SIM
#include <cstdint>
#include <optional>

#include "ascend_ops/numpy_view.hpp"
#include "ascend_sim/sim_module.hpp"

namespace py = pybind11;

namespace aop::lightning_indexer {

void bind_npu_sim(py::module_& m) {
  ascend_sim::bind_npu_sim_queue(m);
  m.def(
      "run_npu_sim",
      [](const py::array& query, const py::array& key, const py::array& weights,
         const std::optional<py::array>& lengths_q, const std::optional<py::array>& lengths_k,
         const std::optional<py::array>& block_table, py::array sparse_indices,
         const std::optional<py::array>& sparse_values, uintptr_t stream, bool queued,
         const std::string& layout_query,
         const std::string& layout_key, int64_t sparse_count, int64_t sparse_mode, const std::string& dtype) {
        Args a = numpy_args(query, key, weights, lengths_q, lengths_k, block_table, layout_query, layout_key,
                            sparse_count, sparse_mode, dtype);
        a.sparse_indices = aop::numpy_view(sparse_indices, "lightning_indexer", "sparse_indices", true);
        if (sparse_values) a.sparse_values = aop::numpy_view(*sparse_values, "lightning_indexer", "sparse_values", true);
        ascend_sim::run_on_sim_stream(a, stream, queued, run_npu);
      },
      py::arg("query"), py::arg("key"), py::arg("weights"), py::arg("actual_seq_lengths_query") = py::none(),
      py::arg("actual_seq_lengths_key") = py::none(), py::arg("block_table") = py::none(),
      py::arg("sparse_indices"), py::arg("sparse_values") = py::none(), py::arg("stream"),
      py::arg("queued") = false,
      py::arg("layout_query") = "BSND", py::arg("layout_key") = "PA_BSND", py::arg("sparse_count") = 2048,
      py::arg("sparse_mode") = 3, py::arg("dtype") = "",
      "queued=True hands the device work to a stand-in of torch_npu's task queue (drain_npu_sim_queue()).\n"
      "Queues the op on a simulated stream through the NPU host path (arrays, outputs included,\n"
      "wrap simulated device memory).");
}

}  // namespace aop::lightning_indexer

#else

namespace aop::lightning_indexer {
void bind_npu_sim(pybind11::module_& m) { m.attr("HAS_NPU_SIM") = false; }
}  // namespace aop::lightning_indexer

#endif
