// run_npu_sim: the NPU host path (run_npu) on common's simulated Ascend runtime, for tests and
// benchmarks. The arrays wrap simulated device memory (ascend_ops.common.ascend_sim); `stream`
// is a simulated aclrtStream. Nothing is read or written by the host: the kernel runs on the
// stream's thread when the stream gets to it.
#include "host/core_module.h"

#ifdef AOP_WITH_NPU_SIM
#include <cstdint>

#include "ascend_sim/sim_module.hpp"

namespace py = pybind11;

namespace aop::adv_step_flash {

void bind_npu_sim(py::module_& m) {
  ascend_sim::bind_npu_sim_queue(m);
  m.def(
      "run_npu_sim",
      [](int64_t num_seqs, int64_t num_queries, int64_t block_size, py::array input_tokens,
         const py::array& sampled_token_ids, py::array input_positions, py::array seq_lens, py::array slot_mapping,
         const py::array& block_tables, uintptr_t stream, bool queued) {
        const Args args = numpy_args(num_seqs, num_queries, block_size, input_tokens, sampled_token_ids,
                                     input_positions, seq_lens, slot_mapping, block_tables);
        ascend_sim::run_on_sim_stream(args, stream, queued, run_npu);
      },
      py::arg("num_seqs"), py::arg("num_queries"), py::arg("block_size"), py::arg("input_tokens"),
      py::arg("sampled_token_ids"), py::arg("input_positions"), py::arg("seq_lens"), py::arg("slot_mapping"),
      py::arg("block_tables"), py::arg("stream"), py::arg("queued") = false,
      "queued=True hands the device work to a stand-in of torch_npu's task queue (drain_npu_sim_queue()).\n"
      "Queues the op on a simulated stream through the NPU host path (arrays wrap simulated device memory).");
}

}  // namespace aop::adv_step_flash

#else

namespace aop::adv_step_flash {
void bind_npu_sim(pybind11::module_& m) { m.attr("HAS_NPU_SIM") = false; }
}  // namespace aop::adv_step_flash

#endif
