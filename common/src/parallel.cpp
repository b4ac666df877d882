// The worker pool behind aop_parallel_for: persistent threads, one job at a time, the
// calling thread takes the first range. Small jobs run inline.
#include "ascend_ops/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace {

thread_local bool t_inside_job = false;  // nested calls run inline instead of deadlocking

struct ThreadRunner {
  aop_parallel_runner run = nullptr;
  void* ctx = nullptr;
  int32_t threads = 1;
};
thread_local ThreadRunner t_runner;  // the framework's pool for calls made on this thread

int32_t env_threads() {  // 0: not set
  if (const char* env = std::getenv("ASCEND_OPS_NUM_THREADS")) {
    const long v = std::strtol(env, nullptr, 10);
    if (v > 0) return static_cast<int32_t>(std::min<long>(v, 256));
  }
  return 0;
}

int32_t default_threads() {
  if (const int32_t env = env_threads()) return env;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int32_t>(hw);
}

class WorkerPool {
 public:
  static WorkerPool& instance() {
    static WorkerPool* pool = new WorkerPool();  // leaked on purpose: no join at exit
    return *pool;
  }

  int32_t threads() const { return threads_.load(); }
  bool explicit_count() const { return explicit_.load(); }
  void set_threads(int32_t n) {
    explicit_.store(n > 0 || env_threads() > 0);
    threads_.store(n > 0 ? std::min(n, 256) : default_threads());
  }

  void run(int64_t n, int64_t grain, aop_range_fn fn, void* ctx) {
    if (n <= 0) return;
    grain = std::max<int64_t>(grain, 1);
    const int64_t parts = std::min<int64_t>(threads(), (n + grain - 1) / grain);
    if (parts <= 1 || t_inside_job) {
      fn(ctx, 0, n);
      return;
    }
    std::lock_guard<std::mutex> one_job(job_mutex_);  // nested or concurrent callers queue here
    ensure_workers(static_cast<int32_t>(parts - 1));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      fn_ = fn;
      ctx_ = ctx;
      n_ = n;
      parts_ = parts;
      next_part_ = 1;
      pending_ = parts - 1;
      ++generation_;
    }
    wake_.notify_all();
    t_inside_job = true;
    run_part(0);
    t_inside_job = false;
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
  }

 private:
  WorkerPool() : threads_(default_threads()), explicit_(env_threads() > 0) {}

  void run_part(int64_t part) const {
    const int64_t begin = n_ * part / parts_;
    const int64_t end = n_ * (part + 1) / parts_;
    if (begin < end) fn_(ctx_, begin, end);
  }

  void ensure_workers(int32_t wanted) {
    while (static_cast<int32_t>(workers_.size()) < wanted) {
      workers_.emplace_back([this] { worker_loop(); });
      workers_.back().detach();
    }
  }

  void worker_loop() {
    t_inside_job = true;
    uint64_t seen = 0;
    for (;;) {
      int64_t part;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_ != seen && next_part_ < parts_; });
        seen = generation_;
        part = next_part_++;
      }
      run_part(part);
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::atomic<int32_t> threads_;
  std::atomic<bool> explicit_;
  std::mutex job_mutex_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  aop_range_fn fn_ = nullptr;
  void* ctx_ = nullptr;
  int64_t n_ = 0, parts_ = 0, next_part_ = 0, pending_ = 0;
  uint64_t generation_ = 0;
};

}  // namespace

extern "C" {

void aop_parallel_for(int64_t n, int64_t grain, aop_range_fn fn, void* ctx) noexcept {
  WorkerPool& pool = WorkerPool::instance();
  if (t_runner.run != nullptr && !pool.explicit_count()) {
    t_runner.run(t_runner.ctx, n, grain, fn, ctx);
    return;
  }
  pool.run(n, grain, fn, ctx);
}

int32_t aop_num_threads(void) noexcept {
  WorkerPool& pool = WorkerPool::instance();
  if (t_runner.run != nullptr && !pool.explicit_count()) return t_runner.threads;
  return pool.threads();
}

void aop_set_thread_runner(aop_parallel_runner run, void* runner_ctx, int32_t threads) noexcept {
  t_runner = run == nullptr ? ThreadRunner{} : ThreadRunner{run, runner_ctx, threads > 0 ? threads : 1};
}

int32_t aop_num_threads_explicit(void) noexcept { return WorkerPool::instance().explicit_count() ? 1 : 0; }

void aop_set_num_threads(int32_t threads) noexcept { WorkerPool::instance().set_threads(threads); }

}  // extern "C"
