// Workspace pools: size classes, reuse, the bound and its message, no leak over 100k cycles,
// 8 threads, a pool destroyed while its blocks are held, and the RAII wrappers.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "aop_test.h"
#include "ascend_ops/workspace.hpp"

namespace {

// An allocator that counts, so leaks and reuse are visible.
struct Counting {
  std::atomic<long> allocs{0}, frees{0};
  std::atomic<long long> live_bytes{0};
  std::atomic<bool> fail{false};
  std::atomic<bool> misalign{false};
};

void* counting_allocate(size_t bytes, size_t alignment, void* ctx) {
  auto* c = static_cast<Counting*>(ctx);
  if (c->fail) return nullptr;
  void* p = nullptr;
  if (posix_memalign(&p, alignment, bytes + (c->misalign ? alignment : 0)) != 0) return nullptr;
  ++c->allocs;
  c->live_bytes += static_cast<long long>(bytes);
  return c->misalign ? static_cast<char*>(p) + 8 : p;
}

void counting_deallocate(void* p, size_t bytes, void* ctx) {
  auto* c = static_cast<Counting*>(ctx);
  ++c->frees;
  c->live_bytes -= static_cast<long long>(bytes);
  if (reinterpret_cast<uintptr_t>(p) % AOP_POOL_ALIGNMENT != 0) p = static_cast<char*>(p) - 8;
  std::free(p);
}

aop_allocator counting(Counting* c) {
  return aop_allocator{counting_allocate, counting_deallocate, c, "counting"};
}

aop_pool_stats stats(const aop_pool* p) {
  aop_pool_stats s;
  aop_pool_get_stats(p, &s);
  return s;
}

aop_block* acquire(aop_pool* p, size_t bytes) {
  aop_error err = aop::make_error();
  aop_block* b = aop_pool_acquire(p, bytes, &err);
  if (b == nullptr) ::aop_test::report(__FILE__, __LINE__, std::string("acquire failed: ") + err.message);
  return b;
}

uint64_t env_limit() {  // what the default pool should have read
  const char* text = std::getenv("ASCEND_OPS_WORKSPACE_LIMIT");
  if (text == nullptr || text[0] == '\0') return 1ull << 30;
  char* end = nullptr;
  uint64_t v = std::strtoull(text, &end, 10);
  if (*end == 'M') v <<= 20;
  return v;
}

}  // namespace

TEST(size_classes_and_alignment) {
  Counting c;
  const aop_allocator a = counting(&c);
  aop_pool* p = aop_pool_create("classes", &a, 1ull << 30, nullptr);
  const std::pair<size_t, size_t> cases[] = {
      {0, 512},       {1, 512},       {512, 512},     {513, 1024},          {4095, 4096},
      {4096, 4096},   {4097, 5120},   {6000, 6144},   {7000, 7168},         {8000, 8192},
      {8193, 10240},  {1 << 20, 1 << 20}, {(1 << 20) + 1, 1310720}, {3000000, 3145728},
  };
  for (const auto& [request, expected] : cases) {
    aop_block* b = acquire(p, request);
    CHECK_EQ(aop_block_size(b), expected);
    CHECK_EQ(reinterpret_cast<uintptr_t>(aop_block_data(b)) % AOP_POOL_ALIGNMENT, 0u);
    std::memset(aop_block_data(b), 0xAB, aop_block_size(b));  // all of it is ours
    aop_block_release(b);
  }
  aop_pool_destroy(p);
  CHECK_EQ(c.allocs.load(), c.frees.load());
}

TEST(reuse_same_size_class) {
  Counting c;
  const aop_allocator a = counting(&c);
  aop_pool* p = aop_pool_create("reuse", &a, 1 << 20, nullptr);
  aop_block* b1 = acquire(p, 1000);
  void* first = aop_block_data(b1);
  aop_block_release(b1);
  aop_pool_stats s = stats(p);
  CHECK_EQ(s.allocations, 1u);
  CHECK_EQ(s.cached_bytes, 1024u);
  CHECK_EQ(s.in_use_bytes, 0u);
  aop_block* b2 = acquire(p, 600);  // same class (1024)
  CHECK(aop_block_data(b2) == first);
  s = stats(p);
  CHECK_EQ(s.allocations, 1u);  // unchanged
  CHECK_EQ(s.reuses, 1u);
  CHECK_EQ(s.acquires, 2u);
  CHECK_EQ(s.in_use_bytes, 1024u);
  CHECK_EQ(s.cached_bytes, 0u);
  CHECK_EQ(s.live_blocks, 1u);
  aop_block* b3 = acquire(p, 2000);  // another class: a new allocation
  CHECK(aop_block_data(b3) != first);
  CHECK_EQ(stats(p).allocations, 2u);
  CHECK_EQ(c.allocs.load(), 2);
  aop_block_release(b2);
  aop_block_release(b3);
  s = stats(p);
  CHECK_EQ(s.peak_bytes, 1024u + 2048u);
  aop_pool_reset_peak(p);
  CHECK_EQ(stats(p).peak_bytes, 1024u + 2048u);  // in use + cached now
  aop_pool_trim(p);
  s = stats(p);
  CHECK_EQ(s.cached_bytes, 0u);
  CHECK_EQ(s.deallocations, 2u);
  aop_pool_reset_peak(p);
  CHECK_EQ(stats(p).peak_bytes, 0u);
  aop_pool_destroy(p);
  CHECK_EQ(c.frees.load(), 2);
}

TEST(bound_is_enforced_with_a_clear_message) {
  Counting c;
  const aop_allocator a = counting(&c);
  aop_pool* p = aop_pool_create("tiny-pool", &a, 8192, nullptr);
  aop_block* x = acquire(p, 4096);
  aop_block* y = acquire(p, 4096);
  aop_error err = aop::make_error();
  CHECK(aop_pool_acquire(p, 100, &err) == nullptr);
  CHECK_EQ(err.status, AOP_MEMORY_ERROR);
  const std::string msg = err.message;
  CHECK(contains(msg, "'tiny-pool'"));
  CHECK(contains(msg, "request of 100 bytes"));
  CHECK(contains(msg, "size class 512 bytes"));
  CHECK(contains(msg, "bound is 8192 bytes"));
  CHECK(contains(msg, "8192 bytes are in use by 2 blocks"));
  CHECK(aop_pool_acquire(p, 9000, &err) == nullptr);  // beyond the bound on its own
  CHECK(contains(err.message, "request of 9000 bytes"));
  // A released block is cached; a new class trims it to make room.
  aop_block_release(x);
  CHECK_EQ(stats(p).cached_bytes, 4096u);
  aop_block* z = acquire(p, 1024);
  aop_pool_stats s = stats(p);
  CHECK_EQ(s.cached_bytes, 0u);
  CHECK_EQ(s.deallocations, 1u);
  CHECK_EQ(s.in_use_bytes, 4096u + 1024u);
  CHECK(s.peak_bytes <= 8192u);
  aop_block_release(y);
  aop_block_release(z);
  aop_pool_destroy(p);
  CHECK_EQ(c.allocs.load(), c.frees.load());
}

TEST(allocator_failure_and_misalignment_are_reported) {
  Counting c;
  const aop_allocator a = counting(&c);
  aop_pool* p = aop_pool_create("failing", &a, 1 << 20, nullptr);
  aop_block_release(acquire(p, 512));  // one cached block, given back before the retry
  c.fail = true;
  aop_error err = aop::make_error();
  CHECK(aop_pool_acquire(p, 5000, &err) == nullptr);
  CHECK_EQ(err.status, AOP_MEMORY_ERROR);
  CHECK(contains(err.message, "allocator 'counting' could not allocate 5120 bytes"));
  aop_pool_stats s = stats(p);
  CHECK_EQ(s.in_use_bytes, 0u);  // the reservation was dropped
  CHECK_EQ(s.cached_bytes, 0u);
  CHECK_EQ(s.deallocations, 1u);
  c.fail = false;
  c.misalign = true;
  CHECK(aop_pool_acquire(p, 512, &err) == nullptr);
  CHECK_EQ(err.status, AOP_RUNTIME_ERROR);
  CHECK(contains(err.message, "not aligned to 512 bytes"));
  c.misalign = false;
  aop_pool_destroy(p);
  CHECK_EQ(c.allocs.load(), c.frees.load());
  CHECK_EQ(c.live_bytes.load(), 0);
}

TEST(invalid_pools_are_refused) {
  aop_error err = aop::make_error();
  CHECK(aop_pool_create("zero", nullptr, 0, &err) == nullptr);
  CHECK_EQ(err.status, AOP_VALUE_ERROR);
  CHECK(contains(err.message, "limit_bytes should be > 0"));
  const aop_allocator half{nullptr, counting_deallocate, nullptr, "half"};
  CHECK(aop_pool_create("half", &half, 1024, &err) == nullptr);
  CHECK(contains(err.message, "both allocate and deallocate"));
  CHECK(aop_pool_acquire(nullptr, 1, &err) == nullptr);
  CHECK(contains(err.message, "pool should not be NULL"));
}

TEST(no_leak_after_100k_cycles) {
  Counting c;
  const aop_allocator a = counting(&c);
  aop_pool* p = aop_pool_create("cycles", &a, 64ull << 20, nullptr);
  const size_t sizes[] = {1, 700, 4096, 5000, 65536, 100000, 1 << 20};
  uint64_t allocations_after_warmup = 0, held_after_warmup = 0;
  for (int i = 0; i < 100000; ++i) {
    aop_block* b1 = acquire(p, sizes[i % 7]);
    aop_block* b2 = acquire(p, sizes[(i * 3 + 1) % 7]);
    static_cast<char*>(aop_block_data(b1))[0] = 1;
    aop_block_release(b2);
    aop_block_release(b1);
    if (i == 100) {
      const aop_pool_stats s = stats(p);
      allocations_after_warmup = s.allocations;
      held_after_warmup = s.in_use_bytes + s.cached_bytes;
    }
  }
  aop_pool_stats s = stats(p);
  CHECK_EQ(s.allocations, allocations_after_warmup);  // steady state: all reuse
  CHECK_EQ(s.in_use_bytes + s.cached_bytes, held_after_warmup);
  CHECK_EQ(s.acquires, 200000u);
  CHECK_EQ(s.live_blocks, 0u);
  CHECK_EQ(s.in_use_bytes, 0u);
  aop_pool_trim(p);
  s = stats(p);
  CHECK_EQ(s.allocations, s.deallocations);
  CHECK_EQ(s.cached_bytes, 0u);
  CHECK_EQ(c.allocs.load(), c.frees.load());
  CHECK_EQ(c.live_bytes.load(), 0);
  aop_pool_destroy(p);
}

TEST(concurrent_acquire_release_from_8_threads) {
  constexpr int kThreads = 8, kIters = 20000;
  Counting c;
  const aop_allocator a = counting(&c);
  aop_pool* p = aop_pool_create("threads", &a, 256ull << 20, nullptr);
  std::atomic<long> corrupt{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(99 + t);
      for (int i = 0; i < kIters; ++i) {
        aop_block* b[2];
        for (aop_block*& one : b) {
          one = aop_pool_acquire(p, 1 + rng() % 70000, nullptr);
          if (one == nullptr) {
            ++failed;
            continue;
          }
          std::memset(aop_block_data(one), t + 1, aop_block_size(one));
        }
        for (aop_block* one : b) {
          if (one == nullptr) continue;
          const auto* bytes = static_cast<const unsigned char*>(aop_block_data(one));
          const size_t n = aop_block_size(one);
          if (bytes[0] != t + 1 || bytes[n / 2] != t + 1 || bytes[n - 1] != t + 1) ++corrupt;
          if (rng() % 4 == 0) {  // another holder, released in turn
            aop_block_retain(one);
            aop_block_release(one);
          }
          aop_block_release(one);
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  CHECK_EQ(corrupt.load(), 0);  // no block was ever handed to two holders
  CHECK_EQ(failed.load(), 0);
  aop_pool_stats s = stats(p);
  CHECK_EQ(s.acquires, static_cast<uint64_t>(kThreads) * kIters * 2);
  CHECK_EQ(s.live_blocks, 0u);
  CHECK_EQ(s.in_use_bytes, 0u);
  CHECK_EQ(s.reuses + s.allocations, s.acquires);
  CHECK(s.reuses > s.allocations);
  aop_pool_trim(p);
  s = stats(p);
  CHECK_EQ(s.allocations, s.deallocations);
  CHECK_EQ(c.allocs.load(), c.frees.load());
  aop_pool_destroy(p);
}

TEST(concurrent_under_a_tight_bound) {
  constexpr int kThreads = 8, kIters = 5000;
  Counting c;
  const aop_allocator a = counting(&c);
  const uint64_t limit = 512 * 1024;
  aop_pool* p = aop_pool_create("tight", &a, limit, nullptr);
  std::atomic<long> ok{0}, refused{0}, wrong_error{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(7 + t);
      for (int i = 0; i < kIters; ++i) {
        aop_block* held[2] = {nullptr, nullptr};
        for (aop_block*& b : held) {  // hold two at once so the threads crowd the bound
          aop_error err = aop::make_error();
          b = aop_pool_acquire(p, 16384 + rng() % 100000, &err);
          if (b == nullptr) {
            ++refused;
            if (err.status != AOP_MEMORY_ERROR || !contains(err.message, "'tight'")) ++wrong_error;
            continue;
          }
          ++ok;
          static_cast<char*>(aop_block_data(b))[aop_block_size(b) - 1] = 1;
          std::this_thread::yield();
        }
        for (aop_block* b : held) aop_block_release(b);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  aop_pool_stats s = stats(p);
  CHECK_EQ(wrong_error.load(), 0);
  CHECK_EQ(s.acquires, static_cast<uint64_t>(ok.load()));
  CHECK_EQ(ok.load() + refused.load(), static_cast<long>(kThreads) * kIters * 2);
  CHECK(refused.load() > 0);  // the bound was really reached
  CHECK(s.reuses > 0);
  CHECK(s.peak_bytes <= limit);
  CHECK_EQ(s.live_blocks, 0u);
  aop_pool_destroy(p);
  CHECK_EQ(c.allocs.load(), c.frees.load());
  CHECK_EQ(c.live_bytes.load(), 0);
}

TEST(destroyed_pool_lives_until_its_last_block) {
  Counting c;
  const aop_allocator a = counting(&c);
  const size_t before = aop_pool_registry_size();
  aop_pool* p = aop_pool_create("doomed", &a, 1 << 20, nullptr);
  CHECK_EQ(aop_pool_registry_size(), before + 1);
  aop_block* held = acquire(p, 3000);
  aop_block_release(acquire(p, 100));  // one cached block
  aop_pool_destroy(p);
  CHECK_EQ(aop_pool_registry_size(), before);
  CHECK_EQ(c.frees.load(), 1);  // the cached block went at once
  std::memset(aop_block_data(held), 7, aop_block_size(held));  // still valid
  aop_block_retain(held);
  aop_block_release(held);
  CHECK_EQ(c.frees.load(), 1);
  aop_block_release(held);  // the last: memory and pool go
  CHECK_EQ(c.allocs.load(), 2);
  CHECK_EQ(c.frees.load(), 2);
  CHECK_EQ(c.live_bytes.load(), 0);
}

TEST(default_pool_and_registry) {
  aop_pool* d = aop_default_pool();
  CHECK(d != nullptr);
  CHECK(aop_default_pool() == d);
  aop_pool_stats s;
  CHECK_EQ(aop_pool_registry_stats(0, &s), 1);
  CHECK_EQ(std::string(s.name), "default");
  CHECK_EQ(s.limit_bytes, env_limit());
  aop_pool_stats none;
  CHECK_EQ(aop_pool_registry_stats(100000, &none), 0);
  aop_pool_destroy(d);  // refused: process-wide
  aop_block* b = acquire(aop_default_pool(), 4096);
  CHECK(b != nullptr);
  aop_block_release(b);
  if (const char* want = std::getenv("AOP_TEST_EXPECT_WORKSPACE_LIMIT")) {
    CHECK_EQ(std::to_string(s.limit_bytes), std::string(want));
  }
  const aop_allocator host = aop_host_allocator();
  CHECK_EQ(std::string(host.name), "host");
}

TEST(extra_release_is_ignored) {
  Counting c;
  const aop_allocator a = counting(&c);
  aop_pool* p = aop_pool_create("double", &a, 1 << 20, nullptr);
  aop_block* b = acquire(p, 512);
  aop_block_release(b);
  aop_block_release(b);  // a bug in the caller: reported on stderr, nothing else happens
  const aop_pool_stats s = stats(p);
  CHECK_EQ(s.live_blocks, 0u);
  CHECK_EQ(s.in_use_bytes, 0u);
  CHECK_EQ(s.cached_bytes, 512u);
  aop_pool_destroy(p);
  CHECK_EQ(c.allocs.load(), c.frees.load());
}

TEST(raii_wrappers) {
  Counting c;
  const aop_allocator a = counting(&c);
  {
    aop::Pool pool = aop::Pool::create("raii", 16384, &a);
    aop::Block b1 = pool.acquire(5000);
    CHECK(static_cast<bool>(b1));
    CHECK_EQ(b1.size(), 5120u);
    b1.as<float>()[0] = 1.5f;
    aop::Block moved = std::move(b1);
    CHECK(!b1);
    CHECK_EQ(moved.as<float>()[0], 1.5f);
    aop::Block other = moved.share();
    CHECK(other.data() == moved.data());
    moved.reset();
    CHECK_EQ(pool.stats().live_blocks, 1u);
    other = pool.acquire(100);  // move-assign releases the old block
    CHECK_EQ(pool.stats().live_blocks, 1u);
    CHECK_EQ(pool.stats().cached_bytes, 5120u);
    CHECK_THROWS_AS(pool.acquire(20000), aop::Error, [](const aop::Error& e) {
      CHECK_EQ(e.status(), AOP_MEMORY_ERROR);
      CHECK(contains(e.what(), "'raii'"));
      CHECK(contains(e.what(), "bound is 16384 bytes"));
    });
    aop::Pool moved_pool = std::move(pool);
    CHECK_EQ(moved_pool.stats().acquires, 2u);
    aop::Block kept = moved_pool.acquire(512);
    moved_pool = aop::Pool::create("raii-2", 4096, &a);  // destroys "raii"; `kept` holds it
    CHECK_EQ(kept.size(), 512u);
  }
  CHECK_EQ(c.allocs.load(), c.frees.load());
  CHECK_EQ(c.live_bytes.load(), 0);
  CHECK_THROWS_AS(aop::Pool::create("bad", 0), aop::Error,
                  [](const aop::Error& e) { CHECK_EQ(e.status(), AOP_VALUE_ERROR); });
  aop::Pool d = aop::default_pool();
  CHECK(d.get() == aop_default_pool());
}
