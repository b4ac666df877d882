// aop_hash_bytes: pinned values (the hash must never change between builds or hosts: keys
// may be logged and compared) and sensitivity to every input bit, the length and the seed.
#include <bitset>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_set>
#include <vector>

#include "aop_test.h"
#include "ascend_ops/hash.hpp"

namespace {
uint64_t h(const std::string& s, uint64_t seed = 0) { return aop_hash_bytes(s.data(), s.size(), seed); }
int bits_differ(uint64_t a, uint64_t b) { return static_cast<int>(std::bitset<64>(a ^ b).count()); }
}  // namespace

// Values cross-checked against an independent Python model of the algorithm in hash.cpp.
TEST(known_values) {
  std::string bytes256;
  for (int i = 0; i < 256; ++i) bytes256.push_back(static_cast<char>(i));
  CHECK_EQ(h(""), 0xc5a49d04a6bab236ull);
  CHECK_EQ(h("a"), 0x20532644cf2918abull);
  CHECK_EQ(h("abcdefgh"), 0xc5deed45b152a6d0ull);
  CHECK_EQ(h("ascend-ops tiling key"), 0x63dbf73e50d842e7ull);
  CHECK_EQ(h(bytes256), 0x5f6cb7ad030ab51dull);
  CHECK_EQ(h("a", 1), 0x5d2aec107e3ef8d5ull);
  CHECK_EQ(h("", 0xFFFFFFFFFFFFFFFFull), 0xdad5e8d114372b05ull);
}

TEST(null_data_is_empty) {
  CHECK_EQ(aop_hash_bytes(nullptr, 0, 7), h("", 7));
  CHECK_EQ(aop_hash_bytes(nullptr, 16, 7), h("", 7));
}

TEST(length_matters) {
  std::unordered_set<uint64_t> seen;
  for (size_t n = 0; n <= 64; ++n) seen.insert(h(std::string(n, '\0')));
  CHECK_EQ(seen.size(), 65u);
}

TEST(seed_matters) {
  std::unordered_set<uint64_t> seen;
  for (uint64_t seed = 0; seed < 1000; ++seed) seen.insert(h("same bytes", seed));
  CHECK_EQ(seen.size(), 1000u);
}

TEST(independent_of_alignment) {
  alignas(16) char buf[64 + 8];
  const char* text = "0123456789abcdefghijklmnopqrstuvwxyz!";
  const uint64_t want = h(text);
  for (int off = 0; off < 8; ++off) {
    std::memcpy(buf + off, text, std::strlen(text));
    CHECK_EQ(aop_hash_bytes(buf + off, std::strlen(text), 0), want);
  }
}

TEST(every_bit_flip_changes_about_half_the_output) {
  for (size_t len : {1u, 7u, 8u, 9u, 31u, 64u, 100u}) {
    std::string s(len, '\0');
    for (size_t i = 0; i < len; ++i) s[i] = static_cast<char>(i * 37 + 11);
    const uint64_t base = h(s);
    long total = 0;
    int flips = 0;
    for (size_t byte = 0; byte < len; ++byte) {
      for (int bit = 0; bit < 8; ++bit) {
        std::string t = s;
        t[byte] = static_cast<char>(t[byte] ^ (1 << bit));
        const int d = bits_differ(base, h(t));
        CHECK(d >= 8);  // never a near-miss
        total += d;
        ++flips;
      }
    }
    const double mean = static_cast<double>(total) / flips;
    CHECK(mean > 28.0 && mean < 36.0);
  }
}

TEST(no_collisions_and_even_buckets) {
  std::unordered_set<uint64_t> seen;
  std::vector<int> buckets(256, 0);
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const std::string key = "my_op/" + std::to_string(i);
    const uint64_t v = h(key);
    seen.insert(v);
    ++buckets[v & 0xFF];  // low bits pick unordered_map buckets
  }
  CHECK_EQ(seen.size(), static_cast<size_t>(n));
  const int expected = n / 256;
  for (int count : buckets) CHECK(count > expected * 8 / 10 && count < expected * 12 / 10);
}
