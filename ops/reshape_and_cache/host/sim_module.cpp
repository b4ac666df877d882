// run_npu_sim: the NPU host path (run_npu) on common's simulated Ascend runtime, for tests and
// benchmarks. The arrays wrap simulated device memory (ascend_ops.common.ascend_sim); `stream`
// is a simulated aclrtStream. Nothing is read or written by the host: the kernel runs on the
// stream's thread when the stream gets to it.
#include "host/core_module.h"

#ifdef AOP_WITH_NPU_SIM
#include <cstdint>

#include "ascend_sim/sim_module.hpp"

namespace py = pybind11;

namespace aop::reshape_and_cache {

void bind_npu_sim(py::module_& m) {
  ascend_sim::bind_npu_sim_queue(m);
  m.def(
      "run_npu_sim",
      [](const py::array& key, const py::object& value, py::array key_cache, const py::object& value_cache,
         const py::array& slot_mapping, uintptr_t stream, bool queued, const std::string& dtype, int64_t cache_mode,
         int64_t head_num) {
        const Args args = numpy_args(key, value, key_cache, value_cache, slot_mapping, dtype, cache_mode, head_num);
        ascend_sim::run_on_sim_stream(args, stream, queued, run_npu);
      },
      py::arg("key"), py::arg("value").none(true), py::arg("key_cache"), py::arg("value_cache").none(true),
      py::arg("slot_mapping"), py::arg("stream"), py::arg("queued") = false, py::arg("dtype") = "",
      py::arg("cache_mode") = 0, py::arg("head_num") = 0,
      "queued=True hands the device work to a stand-in of torch_npu's task queue (drain_npu_sim_queue()).\n"
      "Queues the op on a simulated stream through the NPU host path (arrays wrap simulated device memory).");
}

}  // namespace aop::reshape_and_cache

#else

namespace aop::reshape_and_cache {
void bind_npu_sim(pybind11::module_& m) { m.attr("HAS_NPU_SIM") = false; }
}  // namespace aop::reshape_and_cache

#endif
