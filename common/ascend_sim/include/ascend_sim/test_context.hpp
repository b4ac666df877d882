// A framework stand-in for the simulated runtime's tests: the NpuContext an adapter would hand
// run_npu, on a simulated stream, with a caching workspace allocator that behaves like a
// framework's (torch_npu's caching allocator): it allocates only when a call needs more than
// the stream's cached block, and keeps every block for the life of the process, so queued
// kernels and captured graphs never see freed memory. No task queue: run_npu's work goes
// straight on the stream.
#pragma once
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "ascend_ops/npu_context.hpp"
#include "ascend_sim/ascend_sim.h"

namespace ascend_sim {

class WorkspaceCache {
 public:
  void* get(aclrtStream stream, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    Block& b = blocks_[stream];
    if (b.bytes < bytes) {
      void* p = nullptr;
      const aclError rc = aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
      if (rc != ACL_SUCCESS) throw std::runtime_error("the test allocator's aclrtMalloc failed: " + std::to_string(rc));
      b = Block{p, bytes};  // the smaller block stays allocated (see above)
    }
    return b.ptr;
  }

 private:
  struct Block {
    void* ptr = nullptr;
    size_t bytes = 0;
  };
  std::mutex mutex_;
  std::map<aclrtStream, Block> blocks_;
};

inline WorkspaceCache& workspace_cache() {
  static WorkspaceCache* cache = new WorkspaceCache();
  return *cache;
}

inline aop::NpuContext test_context(aclrtStream stream) {
  aop::NpuContext ctx;
  ctx.stream = stream;
  ctx.device = 0;
  ctx.workspace = [stream](size_t bytes) { return workspace_cache().get(stream, bytes); };
  return ctx;
}

}  // namespace ascend_sim
