// The simulated runtime's part of every op's `_core` (run_npu_sim, ascend_ops/numpy_op.hpp):
// HAS_NPU_SIM, the stand-in task queue's drain entry, and the NpuContext on a simulated stream.
#pragma once
#include <cstdint>

#include <pybind11/pybind11.h>

#include "ascend_sim/test_context.hpp"

namespace ascend_sim {

inline void bind_npu_sim_queue(pybind11::module_& m) {
  m.attr("HAS_NPU_SIM") = true;
  // The stand-in queue's drain poller must run before this op's error-record poller (pollers run
  // in registration order; the records register on the first call): register it now.
  task_queue();
  m.def(
      "drain_npu_sim_queue",
      [] {
        pybind11::gil_scoped_release release;
        task_queue().drain();
      },
      "Waits until the stand-in task queue has put every queued call's work on its stream.");
}

// Runs `run` (the op's run_npu) with the test context on `stream`, the GIL released.
template <typename Args, typename Run>
void run_on_sim_stream(const Args& args, uintptr_t stream, bool queued, Run run) {
  const auto ctx = test_context(reinterpret_cast<aclrtStream>(stream), queued);
  pybind11::gil_scoped_release release;
  run(args, ctx);
}

}  // namespace ascend_sim
