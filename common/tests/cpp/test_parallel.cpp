// aop_parallel_for: every index exactly once, any thread count, nested calls, exceptions.
#include <atomic>
#include <cstdlib>
#include <thread>
#include <stdexcept>
#include <vector>

#include "aop_test.h"
#include "ascend_ops/parallel.hpp"

TEST(covers_every_index_once) {
  for (int32_t threads : {1, 2, 3, 8}) {
    aop_set_num_threads(threads);
    CHECK_EQ(aop_num_threads(), threads);
    for (int64_t n : {0, 1, 7, 1000, 99991}) {
      std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
      std::atomic<int> ranges{0};
      aop::parallel_for(n, 16, [&](int64_t begin, int64_t end) {
        ++ranges;
        for (int64_t i = begin; i < end; ++i) ++seen[static_cast<size_t>(i)];
      });
      int wrong = 0;
      for (auto& s : seen) wrong += s.load() != 1;
      CHECK_EQ(wrong, 0);
      CHECK(ranges.load() <= threads);
    }
  }
  aop_set_num_threads(0);  // back to the default
  CHECK(aop_num_threads() >= 1);
}

TEST(nested_calls_run_inline) {
  aop_set_num_threads(4);
  std::atomic<long> total{0};
  aop::parallel_for(8, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      aop::parallel_for(100, 1, [&](int64_t b2, int64_t e2) { total += e2 - b2; });
    }
  });
  CHECK_EQ(total.load(), 800);
  aop_set_num_threads(0);
}

TEST(first_exception_is_rethrown) {
  aop_set_num_threads(4);
  CHECK_THROWS(aop::parallel_for(1000, 10, [](int64_t b, int64_t) {
                 if (b > 0) throw std::runtime_error("range failed");
               }),
               std::runtime_error);
  std::atomic<long> after{0};  // the pool still works
  aop::parallel_for(1000, 10, [&](int64_t b, int64_t e) { after += e - b; });
  CHECK_EQ(after.load(), 1000);
  aop_set_num_threads(0);
}

namespace {
struct FakeRunner {
  std::atomic<int> calls{0};
  std::atomic<int64_t> items{0};
};
void fake_run(void* runner_ctx, int64_t n, int64_t, aop_range_fn fn, void* ctx) {
  auto* r = static_cast<FakeRunner*>(runner_ctx);
  ++r->calls;
  r->items += n;
  fn(ctx, 0, n);  // one range on the calling thread, as a 1-thread framework pool would
}
}  // namespace

TEST(thread_runner_takes_the_work_unless_a_count_is_explicit) {
  if (std::getenv("ASCEND_OPS_NUM_THREADS") != nullptr) return;  // an explicit count: case 1 only
  FakeRunner runner;
  aop_set_thread_runner(&fake_run, &runner, 3);
  CHECK_EQ(aop_num_threads(), 3);
  CHECK_EQ(aop_num_threads_explicit(), 0);
  std::atomic<long> total{0};
  aop::parallel_for(1000, 10, [&](int64_t b, int64_t e) { total += e - b; });
  CHECK_EQ(total.load(), 1000);
  CHECK_EQ(runner.calls.load(), 1);

  aop_set_num_threads(2);  // explicit: common's pool, the runner is bypassed
  CHECK_EQ(aop_num_threads_explicit(), 1);
  CHECK_EQ(aop_num_threads(), 2);
  aop::parallel_for(1000, 10, [&](int64_t b, int64_t e) { total += e - b; });
  CHECK_EQ(runner.calls.load(), 1);
  aop_set_num_threads(0);
  CHECK_EQ(aop_num_threads_explicit(), 0);

  int other_thread_calls = -1;  // the runner belongs to the thread that installed it
  std::thread([&] {
    aop::parallel_for(100, 1, [](int64_t, int64_t) {});
    other_thread_calls = runner.calls.load();
  }).join();
  CHECK_EQ(other_thread_calls, 1);

  aop_set_thread_runner(nullptr, nullptr, 0);
  aop::parallel_for(1000, 10, [&](int64_t b, int64_t e) { total += e - b; });
  CHECK_EQ(runner.calls.load(), 1);
  CHECK_EQ(total.load(), 3000);
}
