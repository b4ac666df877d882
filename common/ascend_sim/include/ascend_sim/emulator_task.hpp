// What the simulated launch of an op's kernel needs (npu::run_kernel, ascend_ops/npu/run_kernel.hpp): put a callable on a simulated
// stream as a kernel task, and bound each GM argument by the allocation it lies in (from the
// pointer to the allocation's end), so the emulator faults on an access outside it.
// Header-only C++ over ascend_sim.h; compiled into each op's _core in the simulated build.
#pragma once
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

#include "ascend_sim/ascend_sim.h"
#include "ascendc_cpu/launch.h"

namespace ascend_sim {

// Adds [p, end of its allocation) as `name`; a null pointer (an absent optional argument) adds
// nothing. Throws std::runtime_error if `p` is not device memory (freed, host, or foreign).
inline void add_region(ascendc_cpu::GmRegions& regions, const void* p, const char* name, ascendc_cpu::GmKind kind) {
  if (p == nullptr) return;
  void* base = nullptr;
  size_t size = 0;
  if (ascend_sim_region(p, &base, &size) == 0) {
    throw std::runtime_error(std::string("GM argument ") + name + " is not live device memory");
  }
  const size_t bytes = size - (static_cast<const char*>(p) - static_cast<const char*>(base));
  regions.push_back({p, bytes, name, kind});
}

// Puts `call()` on `stream` as a kernel named `name`; an exception it throws is the task's
// device fault (reported by the stream's next synchronisation).
template <class Call>
aclError launch_task(aclrtStream stream, const char* name, Call call) {
  auto* owned = new Call(std::move(call));
  const ascend_sim_task_fn run = [](void* ctx, char* error, size_t error_size) -> int {
    try {
      (*static_cast<Call*>(ctx))();
      return 0;
    } catch (const std::exception& e) {
      std::snprintf(error, error_size, "%s", e.what());
      return 1;
    }
  };
  return ascend_sim_launch(stream, name, run, owned, [](void* ctx) { delete static_cast<Call*>(ctx); });
}

}  // namespace ascend_sim
