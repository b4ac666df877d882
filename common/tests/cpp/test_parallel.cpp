// aop_parallel_for: every index exactly once, any thread count, nested calls, exceptions.
#include <atomic>
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
