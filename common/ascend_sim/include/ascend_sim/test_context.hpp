// A framework stand-in for the simulated runtime's tests: the NpuContext an adapter would hand
// run_npu, on a simulated stream, with a caching workspace allocator that behaves like a
// framework's (torch_npu's caching allocator): it allocates only when a call needs more than
// the stream's cached block, and keeps every block for the life of the process, so queued
// kernels and captured graphs never see freed memory. With `queued`, the call's device work
// goes through a stand-in of torch_npu's task queue (TaskQueue: in order, on its own thread,
// after the call returned), as torch_npu_context.hpp's OpCommand handler does; without it,
// straight on the stream (as MindSpore's device task does).
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "ascend_ops/async_error.hpp"
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

// Work runs in submission order on one thread; an aop::Error it throws becomes the pending
// asynchronous error (as in torch_npu_context.hpp's handler). drain() waits for all of it.
class TaskQueue {
 public:
  TaskQueue() : thread_([this] { run(); }) {}
  void push(std::function<void()> work) {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(work));
    ++pushed_;
    cv_.notify_all();
  }
  void drain() {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t target = pushed_;
    cv_.wait(lock, [&] { return done_ >= target; });
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      cv_.wait(lock, [&] { return !queue_.empty(); });
      std::function<void()> work = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      try {
        work();
      } catch (const aop::Error& e) {
        aop::post_async_error(e);
      }
      lock.lock();
      ++done_;
      cv_.notify_all();
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  uint64_t pushed_ = 0, done_ = 0;
  std::thread thread_;  // detached by never destroying the queue (see task_queue())
};

// The queue, and (first use) an async-error poller that drains it before check_errors()
// synchronises the devices: work still in the queue is then on the stream (as torch_npu_context
// drains torch_npu's queue).
inline TaskQueue& task_queue() {
  static TaskQueue* queue = [] {
    auto* q = new TaskQueue();  // never destroyed: its thread lives with the process
    aop_async_error_add_poller([](int synchronize, void* self) {
      if (synchronize != 0) static_cast<TaskQueue*>(self)->drain();
    }, q);
    return q;
  }();
  return *queue;
}

inline aop::NpuContext test_context(aclrtStream stream, bool queued = false) {
  aop::NpuContext ctx;
  ctx.stream = stream;
  ctx.device = 0;
  ctx.workspace = [stream](size_t bytes) { return workspace_cache().get(stream, bytes); };
  if (queued) ctx.submit = [](std::function<void()> work) { task_queue().push(std::move(work)); };
  return ctx;
}

}  // namespace ascend_sim
