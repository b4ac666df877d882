// Internals of the simulated Ascend runtime shared by its source files: counters, the memory
// table, streams (in-order task queues, each on its own thread) and capture.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "acl/acl.h"

namespace ascend_sim {

struct Counters {
  std::atomic<uint64_t> synchronizations{0}, h2d_copies{0}, d2h_copies{0}, d2d_copies{0}, allocations{0},
      frees{0}, launches{0}, memsets{0}, pageable_refused{0}, capture_violations{0};
};
Counters& counters();

// --- memory.cpp ---------------------------------------------------------------------------
// Whether [p, p + n) lies in one live allocation the device can access (aclrtMalloc or host
// memory registered as mapped), or in pinned host memory (aclrtMallocHost or registered).
bool device_accessible(const void* p, size_t n);
bool pinned_host(const void* p, size_t n);

// --- streams.cpp --------------------------------------------------------------------------
enum class TaskKind { kKernel, kH2D, kD2H, kD2D, kMemset, kEvent };

// One unit of stream work. run() returns "" or a device fault's message.
struct Task {
  TaskKind kind;
  std::string name;
  std::function<std::string()> run;
};
using TaskPtr = std::shared_ptr<const Task>;

// Counts `task` (a copy, a launch, ...) and puts it on `stream` (or in the graph it captures).
aclError submit(aclrtStream stream, TaskPtr task);
// Counts the host synchronisation `what`; fails it (a capture violation) while any stream captures.
aclError begin_synchronization();
// A new allocation is refused while any stream captures (counted as a violation).
aclError begin_allocation();
void count_task(TaskKind kind);

}  // namespace ascend_sim
