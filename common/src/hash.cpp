// aop_hash_bytes: a 64-bit hash of a cache key, written for this project.
//
// Eight bytes at a time (read little-endian, so the value is the same on every host), each
// word multiplied, rotated and folded into the state; the tail and the length are folded in
// too, and a final avalanche spreads every input bit over the output.
#include <cstdint>

#include "ascend_ops/hash.h"

namespace {
constexpr uint64_t kMulA = 0x9E3779B97F4A7C15ull;  // 2^64 / golden ratio, odd
constexpr uint64_t kMulB = 0xD6E8FEB86659FD93ull;
constexpr uint64_t kFinA = 0xFF51AFD7ED558CCDull;
constexpr uint64_t kFinB = 0xC4CEB9FE1A85EC53ull;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// Little-endian load of n <= 8 bytes; compilers turn the full-word case into one load.
inline uint64_t load_le(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

inline uint64_t fold(uint64_t state, uint64_t word) {
  word *= kMulB;
  word = rotl(word, 29);
  word *= kMulA;
  state ^= word;
  state = rotl(state, 31);
  return state * kMulA + kMulB;
}

inline uint64_t avalanche(uint64_t h) {
  h ^= h >> 33;
  h *= kFinA;
  h ^= h >> 29;
  h *= kFinB;
  h ^= h >> 32;
  return h;
}
}  // namespace

extern "C" uint64_t aop_hash_bytes(const void* data, size_t len, uint64_t seed) noexcept {
  if (data == nullptr) len = 0;
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = (seed + kMulA) ^ (static_cast<uint64_t>(len) * kMulB);
  size_t left = len;
  for (; left >= 8; left -= 8, p += 8) h = fold(h, load_le(p, 8));
  if (left > 0) h = fold(h, load_le(p, left) | (static_cast<uint64_t>(left) << 56));
  return avalanche(h);
}
