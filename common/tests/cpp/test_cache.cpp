// LRU caches: hits, misses, LRU order, eviction while held, exact counters under 8 threads,
// the registry, capacities from the environment, and the C++ wrappers.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "aop_test.h"
#include "ascend_ops/cache.hpp"

namespace {

std::atomic<long> g_created{0};
std::atomic<long> g_deleted{0};

struct Obj {
  int payload;
  std::string text;
};

Obj* new_obj(int payload) {
  ++g_created;
  return new Obj{payload, "object-" + std::to_string(payload)};
}
void delete_obj(void* p) {
  delete static_cast<Obj*>(p);
  ++g_deleted;
}

struct Owned {  // an extra cache destroyed at scope end
  aop_cache* c;
  Owned(const char* name, uint64_t capacity) : c(aop_cache_create(name, capacity, nullptr)) {}
  ~Owned() { aop_cache_destroy(c); }
};

aop_value* put_text(aop_cache* c, const std::string& key, const std::string& text) {
  aop_error err = aop::make_error();
  aop_value* v = aop_cache_put(c, key.data(), key.size(), text.data(), text.size(), nullptr, nullptr, &err);
  CHECK(v != nullptr);
  CHECK_EQ(err.status, AOP_OK);
  return v;
}
void put_release(aop_cache* c, const std::string& key, const std::string& text) {
  aop_value_release(put_text(c, key, text));
}
std::string text_of(const aop_value* v) {
  size_t len = 0;
  const char* p = static_cast<const char*>(aop_value_bytes(v, &len));
  return std::string(p, len);
}
bool present(aop_cache* c, const std::string& key) {  // counts a get
  aop_value* v = aop_cache_get(c, key.data(), key.size());
  aop_value_release(v);
  return v != nullptr;
}
aop_cache_stats stats(const aop_cache* c) {
  aop_cache_stats s;
  aop_cache_get_stats(c, &s);
  return s;
}
// What the library should have read from `name` (strict decimal, else the default).
uint64_t env_capacity(const char* name, uint64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || text[0] == '\0') return fallback;
  uint64_t v = 0;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') return fallback;
    v = v * 10 + static_cast<uint64_t>(*p - '0');
  }
  return v;
}

}  // namespace

TEST(builtin_caches_come_first_in_the_registry) {
  aop_cache* tiling = aop_tiling_cache();
  aop_cache* ops = aop_operator_cache();
  CHECK(tiling != nullptr && ops != nullptr && tiling != ops);
  CHECK(aop_tiling_cache() == tiling);
  CHECK(aop_cache_registry_size() >= 2);
  aop_cache_stats s;
  CHECK_EQ(aop_cache_registry_stats(0, &s), 1);
  CHECK_EQ(std::string(s.name), "tiling");
  CHECK_EQ(aop_cache_registry_stats(1, &s), 1);
  CHECK_EQ(std::string(s.name), "operator");
  CHECK_EQ(aop_cache_registry_stats(1000, &s), 0);
  aop_cache_destroy(tiling);  // refused: process-wide
  CHECK(aop_tiling_cache() == tiling);
  CHECK_EQ(stats(tiling).capacity, env_capacity("ASCEND_OPS_TILING_CACHE_SIZE", 1024));
}

// Run by ctest with and without ASCEND_OPS_*_CACHE_SIZE set (also to a malformed value).
TEST(capacity_from_environment) {
  CHECK_EQ(stats(aop_tiling_cache()).capacity, env_capacity("ASCEND_OPS_TILING_CACHE_SIZE", 1024));
  CHECK_EQ(stats(aop_operator_cache()).capacity, env_capacity("ASCEND_OPS_OPERATOR_CACHE_SIZE", 256));
  // ctest also states the outcome, so a run where the variables never arrived fails.
  if (const char* want = std::getenv("AOP_TEST_EXPECT_CAPACITIES")) {
    const std::string got = std::to_string(stats(aop_tiling_cache()).capacity) + "," +
                            std::to_string(stats(aop_operator_cache()).capacity);
    CHECK_EQ(got, std::string(want));
  }
}

TEST(miss_then_hit_with_full_key_compare) {
  Owned c("keys", 16);
  const std::string k1("a\0b", 3), k2("a\0c", 3), k3("a", 1);
  CHECK(aop_cache_get(c.c, k1.data(), k1.size()) == nullptr);
  put_release(c.c, k1, "one");
  put_release(c.c, k2, "two");
  put_release(c.c, k3, "three");
  put_release(c.c, "", "empty key");
  for (auto kv : {std::make_pair(k1, "one"), std::make_pair(k2, "two"), std::make_pair(k3, "three"),
                  std::make_pair(std::string(), "empty key")}) {
    aop_value* v = aop_cache_get(c.c, kv.first.data(), kv.first.size());
    CHECK(v != nullptr);
    if (v != nullptr) CHECK_EQ(text_of(v), kv.second);
    aop_value_release(v);
  }
  CHECK(!present(c.c, std::string("a\0b\0", 4)));
  const aop_cache_stats s = stats(c.c);
  CHECK_EQ(s.hits, 4u);
  CHECK_EQ(s.misses, 2u);
  CHECK_EQ(s.inserts, 4u);
  CHECK_EQ(s.size, 4u);
  CHECK_EQ(s.evictions, 0u);
  CHECK_EQ(std::string(s.name), "keys");
}

TEST(lru_order) {
  Owned c("lru", 3);
  put_release(c.c, "a", "A");
  put_release(c.c, "b", "B");
  put_release(c.c, "c", "C");
  aop_value_release(aop_cache_get(c.c, "a", 1));  // a is now the most recent
  put_release(c.c, "d", "D");                      // evicts b
  aop_value_release(aop_cache_get(c.c, "c", 1));  // order: c, d, a
  put_release(c.c, "e", "E");                      // evicts a
  CHECK_EQ(stats(c.c).evictions, 2u);
  CHECK(!present(c.c, "b"));
  CHECK(!present(c.c, "a"));
  CHECK(present(c.c, "c"));
  CHECK(present(c.c, "d"));
  CHECK(present(c.c, "e"));
  CHECK_EQ(stats(c.c).size, 3u);
}

TEST(existing_entry_wins_and_new_object_is_deleted) {
  Owned c("wins", 4);
  const long deleted0 = g_deleted;
  Obj* first = new_obj(1);
  Obj* second = new_obj(2);
  aop_value* v1 = aop_cache_put(c.c, "k", 1, nullptr, 0, first, delete_obj, nullptr);
  aop_value* v2 = aop_cache_put(c.c, "k", 1, nullptr, 0, second, delete_obj, nullptr);
  CHECK(v1 == v2);
  CHECK(aop_value_object(v2) == first);
  CHECK_EQ(g_deleted - deleted0, 1);  // `second`
  CHECK_EQ(stats(c.c).inserts, 1u);
  aop_value_release(v1);
  aop_value_release(v2);
  CHECK_EQ(g_deleted - deleted0, 1);  // still cached
  aop_cache_clear(c.c);
  CHECK_EQ(g_deleted - deleted0, 2);
}

TEST(value_stays_valid_after_eviction_while_held) {
  Owned c("held", 1);
  const long deleted0 = g_deleted;
  aop_value* held = aop_cache_put(c.c, "x", 1, "bytes", 5, new_obj(7), delete_obj, nullptr);
  aop_value_release(aop_cache_put(c.c, "y", 1, nullptr, 0, new_obj(8), delete_obj, nullptr));
  CHECK_EQ(stats(c.c).evictions, 1u);
  CHECK(!present(c.c, "x"));
  CHECK_EQ(g_deleted - deleted0, 0);  // evicted but held
  CHECK_EQ(static_cast<Obj*>(aop_value_object(held))->payload, 7);
  CHECK_EQ(static_cast<Obj*>(aop_value_object(held))->text, "object-7");
  CHECK_EQ(text_of(held), "bytes");
  aop_value_retain(held);
  aop_value_release(held);
  CHECK_EQ(g_deleted - deleted0, 0);
  aop_value_release(held);  // the last holder
  CHECK_EQ(g_deleted - deleted0, 1);
}

TEST(clear_keeps_counters_reset_zeroes_them) {
  Owned c("clear", 8);
  put_release(c.c, "a", "1");
  put_release(c.c, "b", "2");
  CHECK(present(c.c, "a"));
  aop_cache_clear(c.c);
  aop_cache_stats s = stats(c.c);
  CHECK_EQ(s.size, 0u);
  CHECK_EQ(s.inserts, 2u);
  CHECK_EQ(s.hits, 1u);
  CHECK(!present(c.c, "a"));
  aop_cache_reset_stats(c.c);
  s = stats(c.c);
  CHECK_EQ(s.hits + s.misses + s.inserts + s.evictions, 0u);
  CHECK_EQ(s.capacity, 8u);
}

TEST(set_capacity_evicts_least_recent) {
  Owned c("shrink", 10);
  for (int i = 0; i < 10; ++i) put_release(c.c, std::to_string(i), "v");
  aop_error err = aop::make_error();
  CHECK_EQ(aop_cache_set_capacity(c.c, 4, &err), AOP_OK);
  const aop_cache_stats s = stats(c.c);
  CHECK_EQ(s.size, 4u);
  CHECK_EQ(s.evictions, 6u);
  CHECK_EQ(s.capacity, 4u);
  for (int i = 0; i < 6; ++i) CHECK(!present(c.c, std::to_string(i)));
  for (int i = 6; i < 10; ++i) CHECK(present(c.c, std::to_string(i)));
  CHECK_EQ(aop_cache_set_capacity(nullptr, 4, &err), AOP_VALUE_ERROR);
  CHECK(contains(err.message, "cache should not be NULL"));
}

TEST(capacity_zero_caches_nothing_but_returns_the_value) {
  Owned c("off", 0);
  aop_value* v = put_text(c.c, "k", "value");
  CHECK_EQ(text_of(v), "value");
  aop_value_release(v);
  const aop_cache_stats s = stats(c.c);
  CHECK_EQ(s.size, 0u);
  CHECK_EQ(s.inserts - s.evictions, s.size);
  CHECK(!present(c.c, "k"));
}

TEST(registry_tracks_created_and_destroyed_caches) {
  const size_t before = aop_cache_registry_size();
  aop_cache* a = aop_cache_create("registry-a", 5, nullptr);
  aop_cache* b = aop_cache_create(nullptr, 6, nullptr);
  CHECK_EQ(aop_cache_registry_size(), before + 2);
  aop_cache_stats s;
  CHECK_EQ(aop_cache_registry_stats(before, &s), 1);
  CHECK_EQ(std::string(s.name), "registry-a");
  CHECK_EQ(s.capacity, 5u);
  CHECK_EQ(aop_cache_registry_stats(before + 1, &s), 1);
  CHECK_EQ(std::string(s.name), "unnamed");
  aop_cache_destroy(a);
  CHECK_EQ(aop_cache_registry_size(), before + 1);
  CHECK_EQ(aop_cache_registry_stats(before, &s), 1);
  CHECK_EQ(s.capacity, 6u);
  aop_cache_destroy(b);
  CHECK_EQ(aop_cache_registry_size(), before);
  const std::string long_name(200, 'n');
  aop_cache* c = aop_cache_create(long_name.c_str(), 1, nullptr);
  aop_cache_get_stats(c, &s);
  CHECK_EQ(std::string(s.name), std::string(AOP_NAME_BYTES - 1, 'n'));
  aop_cache_destroy(c);
}

TEST(put_rejects_bad_arguments_and_deletes_the_object) {
  Owned c("bad", 4);
  const long deleted0 = g_deleted;
  aop_error err = aop::make_error();
  CHECK(aop_cache_put(c.c, nullptr, 3, "v", 1, new_obj(1), delete_obj, &err) == nullptr);
  CHECK_EQ(err.status, AOP_VALUE_ERROR);
  CHECK(contains(err.message, "key should not be NULL"));
  CHECK(aop_cache_put(nullptr, "k", 1, "v", 1, new_obj(2), delete_obj, &err) == nullptr);
  CHECK(contains(err.message, "cache should not be NULL"));
  CHECK_EQ(g_deleted - deleted0, 2);
  CHECK(aop_cache_get(nullptr, "k", 1) == nullptr);
  CHECK(aop_cache_get(c.c, nullptr, 1) == nullptr);
  CHECK_EQ(stats(c.c).misses, 0u);
}

TEST(concurrent_get_put_with_evictions_counts_exactly) {
  constexpr int kThreads = 8, kIters = 20000, kKeys = 256, kCapacity = 64;
  const long created0 = g_created, deleted0 = g_deleted;
  aop_cache* c = aop_cache_create("concurrent", kCapacity, nullptr);
  std::atomic<long> hits{0}, misses{0}, puts{0}, existing{0}, bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(1234 + t);
      long my_hits = 0, my_misses = 0, my_puts = 0, my_existing = 0, my_bad = 0;
      for (int i = 0; i < kIters; ++i) {
        const int k = static_cast<int>(rng() % kKeys);
        const std::string key = "key/" + std::to_string(k);
        const std::string want = "value/" + std::to_string(k);
        aop_value* v = aop_cache_get(c, key.data(), key.size());
        if (v != nullptr) {
          ++my_hits;
        } else {
          ++my_misses;
          Obj* mine = new_obj(k);
          v = aop_cache_put(c, key.data(), key.size(), want.data(), want.size(), mine, delete_obj, nullptr);
          ++my_puts;
          if (v != nullptr && aop_value_object(v) != mine) ++my_existing;
        }
        if (v == nullptr || text_of(v) != want || static_cast<Obj*>(aop_value_object(v))->payload != k) {
          ++my_bad;
        }
        aop_value_release(v);
        if (i % 1000 == 0) stats(c);  // readers contend too
      }
      hits += my_hits;
      misses += my_misses;
      puts += my_puts;
      existing += my_existing;
      bad += my_bad;
    });
  }
  for (std::thread& th : threads) th.join();
  const aop_cache_stats s = stats(c);
  CHECK_EQ(bad.load(), 0);
  CHECK_EQ(s.hits, static_cast<uint64_t>(hits.load()));
  CHECK_EQ(s.misses, static_cast<uint64_t>(misses.load()));
  CHECK_EQ(s.hits + s.misses, static_cast<uint64_t>(kThreads) * kIters);
  CHECK_EQ(s.inserts, static_cast<uint64_t>(puts.load() - existing.load()));
  CHECK_EQ(s.inserts - s.evictions, s.size);
  CHECK_EQ(s.size, static_cast<uint64_t>(kCapacity));
  CHECK(s.evictions > 1000);  // the key space really exceeded the capacity
  CHECK_EQ(g_created - created0 - (g_deleted - deleted0), static_cast<long>(kCapacity));
  aop_cache_destroy(c);
  CHECK_EQ(g_created - created0, g_deleted - deleted0);  // nothing leaked
}

namespace {
struct Tiling {
  int32_t block_dim;
  int32_t tile;
  int64_t total;
};
struct BigTiling {
  int64_t v[4];
};
struct State {
  explicit State(int n) : n(n), label("state-" + std::to_string(n)) { ++alive; }
  State(const State& other) : n(other.n), label(other.label) { ++alive; }
  ~State() { --alive; }
  int n;
  std::string label;
  static std::atomic<int> alive;
};
std::atomic<int> State::alive{0};
}  // namespace

TEST(wrapper_get_or_compute_pod) {
  aop::UniqueCache owned = aop::make_cache("pod", 8);
  aop::Cache cache(owned.get());
  int computed = 0;
  auto tile = [&] {
    ++computed;
    return Tiling{40, 128, 1 << 20};
  };
  const aop::KeyBuilder key = aop::KeyBuilder("op").add_shape({1024, 1024});
  const Tiling a = cache.get_or_compute_pod<Tiling>(key, tile);
  const Tiling b = cache.get_or_compute_pod<Tiling>(key, tile);
  CHECK_EQ(computed, 1);
  CHECK_EQ(a.block_dim, 40);
  CHECK_EQ(b.tile, 128);
  CHECK_EQ(b.total, 1 << 20);
  const aop::CacheStats s = cache.stats();
  CHECK_EQ(s.hits, 1u);
  CHECK_EQ(s.misses, 1u);
  CHECK_EQ(s.inserts, 1u);
  // compute() throwing stores nothing
  const aop::KeyBuilder other = aop::KeyBuilder("op").add_shape({3});
  CHECK_THROWS(cache.get_or_compute_pod<Tiling>(other, []() -> Tiling { aop::fail(AOP_VALUE_ERROR, "bad"); }),
               aop::Error);
  CHECK_EQ(cache.stats().size, 1u);
  // The same key read as another struct is refused, not reinterpreted.
  CHECK_THROWS_AS(cache.get_or_compute_pod<BigTiling>(key, [] { return BigTiling{}; }), aop::Error,
                  [](const aop::Error& e) {
                    CHECK_EQ(e.status(), AOP_RUNTIME_ERROR);
                    CHECK(contains(e.what(), "holds 16 bytes, expected a 32-byte struct"));
                  });
}

TEST(wrapper_get_or_create_object) {
  aop::UniqueCache owned = aop::make_cache("objects", 1);
  aop::Cache cache(owned.get());
  const int alive0 = State::alive;
  int created = 0;
  const aop::KeyBuilder k1 = aop::KeyBuilder("op").add_int(1);
  const aop::KeyBuilder k2 = aop::KeyBuilder("op").add_int(2);
  std::shared_ptr<State> a = cache.get_or_create_object<State>(k1, [&] {
    ++created;
    return std::make_unique<State>(1);
  });
  std::shared_ptr<State> again = cache.get_or_create_object<State>(k1, [&] {
    ++created;
    return std::make_unique<State>(99);
  });
  CHECK_EQ(created, 1);
  CHECK(a.get() == again.get());
  CHECK_EQ(again->label, "state-1");
  // k2 evicts k1 (capacity 1) while `a` holds it: still alive, freed when the last goes.
  std::shared_ptr<State> b = cache.get_or_create_object<State>(k2, [] { return State(2); });
  CHECK_EQ(b->n, 2);
  CHECK_EQ(cache.stats().evictions, 1u);
  CHECK_EQ(State::alive - alive0, 2);
  CHECK_EQ(a->label, "state-1");
  a.reset();
  CHECK_EQ(State::alive - alive0, 2);
  again.reset();
  CHECK_EQ(State::alive - alive0, 1);
  // A raw pointer from create() is owned from then on.
  std::shared_ptr<State> c = cache.get_or_create_object<State>(k1, [] { return new State(3); });
  CHECK_EQ(c->n, 3);
  // Another type under the same key is refused.
  CHECK_THROWS_AS(cache.get_or_create_object<Obj>(k1, [] { return Obj{0, ""}; }), aop::Error,
                  [](const aop::Error& e) {
                    CHECK(contains(e.what(), "expected '"));
                    CHECK(contains(e.what(), "cxx11abi="));
                  });
  // A POD entry read as an object is refused too.
  cache.get_or_compute_pod<Tiling>(k2, [] { return Tiling{}; });
  CHECK_THROWS(cache.get_or_create_object<State>(k2, [] { return State(4); }), aop::Error);
  b.reset();
  c.reset();
  owned.reset();
  CHECK_EQ(State::alive - alive0, 0);
}

TEST(wrapper_process_wide_caches) {
  CHECK(aop::tiling_cache().get() == aop_tiling_cache());
  CHECK(aop::operator_cache().get() == aop_operator_cache());
  CHECK_EQ(std::string(aop::tiling_cache().stats().name), "tiling");
}
