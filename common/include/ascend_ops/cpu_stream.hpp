// Row writes of the CPU kernels into big caches (a KV cache, an indexer key cache): ordinary or
// streaming (non-temporal) stores, and the size rule that picks one.
//
// Why: an ordinary store to a line that is not in any cache first reads the line (read for
// ownership), so a scatter of rows into a cache far larger than the last-level cache (LLC) moves
// about twice the bytes it writes. A streaming store writes the whole line without reading it,
// and does not evict useful lines on its way. Into a cache that fits the LLC (or rows written
// again soon) it is slower: the line leaves the cache and the next read goes to memory. Measured
// on this project's machine (2 KiB rows at shuffled slots of a 512 MiB buffer, AVX-512): cold
// lines 1.5-2x faster streamed, lines already cached 1.3-2x slower; the break-even is near 5 in 6
// lines cached, so a destination span above the LLC (at most LLC / span of its lines can be in
// it) streams. `stream_rows` applies the rule; ASCEND_OPS_CPU_STREAM overrides it.
//
// Memory model: streaming stores are weakly ordered. Every thread that issued them calls
// `stream_fence()` before it reports its work done (the end of its parallel_for range), so the
// pool's hand-off (a mutex) publishes them like ordinary stores.
//
// Per ISA build (x86-64: AVX-512, AVX2, the SSE2 baseline; capped by ASCEND_OPS_CPU_ISA, see
// cpu_isa.hpp); elsewhere (AArch64) ordinary stores. The bytes written are the same on every build.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

#include "ascend_ops/cpu_isa.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define AOP_CPU_STREAM_X86 1
#endif

namespace aop::cpu_stream {

// Bytes of the last-level cache: the largest cache of cpu0 in sysfs (the kernel's view, also
// under a hypervisor), else sysconf(_SC_LEVEL3_CACHE_SIZE) / _SC_LEVEL2_CACHE_SIZE, else 32 MiB.
// sysfs comes first: glibc's sysconf derives it from cpuid, which some hypervisors fill oddly
// (seen here: 320 MiB for a 32 MiB L3). Read once.
inline int64_t llc_bytes();

// The size in bytes of /sys/devices/system/cpu/cpu0/cache/index<i>/size ("32768K"), 0 if absent.
inline int64_t sysfs_cache_bytes(int index);

// ASCEND_OPS_CPU_STREAM: "always" / "never" force a path (tests, benchmarks, a user who knows
// better); unset or anything else: the size rule.
enum class Policy { kAuto, kAlways, kNever };
inline Policy policy_of(const char* value);
inline Policy policy() {
  static const Policy p = policy_of(std::getenv("ASCEND_OPS_CPU_STREAM"));
  return p;
}

// Whether rows written at scattered places of destinations spanning `dest_bytes` in all (the
// caches a call writes) take streaming stores: the destination is larger than the LLC.
inline bool stream_rows(int64_t dest_bytes) {
  const Policy p = policy();
  if (p != Policy::kAuto) return p == Policy::kAlways;
  return dest_bytes > llc_bytes();
}

// copy(dst, src, n): n bytes, the whole 64-byte lines of dst by streaming stores, a head up to
// the first line boundary and a tail after the last by ordinary stores. Any alignment, any n.
using CopyFn = void (*)(void* dst, const void* src, size_t n);

struct Streaming {
  CopyFn copy;
  const char* isa;  // "avx512", "avx2", "sse2", or "none" (ordinary stores: no such build)
};
// The build for this CPU, at most ASCEND_OPS_CPU_ISA's (chosen once).
inline const Streaming& streaming();

// Orders this thread's streaming stores before its later stores (x86 sfence); call it before
// the work is reported done.
inline void stream_fence() {
#ifdef AOP_CPU_STREAM_X86
  _mm_sfence();
#endif
}

// Hint that the line at p will be written soon: its page's translation and (for ordinary
// stores) the line itself are fetched early. Measured with scattered 2 KiB rows: the next
// rows' first lines a few tokens ahead cut the time per row by a quarter to a third.
inline void prefetch_for_write(const void* p) { __builtin_prefetch(p, 1, 3); }

// ---- definitions ----

inline int64_t sysfs_cache_bytes(int index) {
  char path[96];
  std::snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return 0;
  char text[32] = {};
  const bool read = std::fgets(text, sizeof text, f) != nullptr;
  std::fclose(f);
  if (!read) return 0;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (v <= 0) return 0;
  const int64_t unit = *end == 'K' ? 1024 : *end == 'M' ? 1024 * 1024 : *end == 'G' ? int64_t{1} << 30 : 1;
  return static_cast<int64_t>(v) * unit;
}

inline int64_t llc_bytes() {
  static const int64_t bytes = [] {
    int64_t best = 0;
    for (int i = 0; i < 8; ++i) {
      const int64_t b = sysfs_cache_bytes(i);
      best = b > best ? b : best;
    }
#ifdef _SC_LEVEL3_CACHE_SIZE
    if (best == 0) best = static_cast<int64_t>(sysconf(_SC_LEVEL3_CACHE_SIZE));
    if (best <= 0) best = static_cast<int64_t>(sysconf(_SC_LEVEL2_CACHE_SIZE));
#endif
    return best > 0 ? best : int64_t{32} << 20;
  }();
  return bytes;
}

inline Policy policy_of(const char* value) {
  if (value != nullptr && std::strcmp(value, "always") == 0) return Policy::kAlways;
  if (value != nullptr && std::strcmp(value, "never") == 0) return Policy::kNever;
  return Policy::kAuto;
}

namespace detail {

// The head before dst's first 64-byte boundary (at most n).
inline size_t head_bytes(const void* dst, size_t n) {
  const size_t h = (64 - (reinterpret_cast<uintptr_t>(dst) & 63)) & 63;
  return h < n ? h : n;
}

inline void copy_ordinary(void* dst, const void* src, size_t n) { std::memcpy(dst, src, n); }

#ifdef AOP_CPU_STREAM_X86
// The lines of [d, d + lines * 64), d 64-byte aligned, from s (any alignment).
__attribute__((target("avx512f"))) inline void lines_avx512(char* d, const char* s, size_t lines) {
  for (size_t i = 0; i < lines; ++i) {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d + 64 * i), _mm512_loadu_si512(s + 64 * i));
  }
}
__attribute__((target("avx2"))) inline void lines_avx2(char* d, const char* s, size_t lines) {
  for (size_t i = 0; i < lines; ++i) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 64 * i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 64 * i + 32));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + 64 * i), a);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + 64 * i + 32), b);
  }
}
inline void lines_sse2(char* d, const char* s, size_t lines) {
  for (size_t i = 0; i < lines; ++i) {
    for (int k = 0; k < 4; ++k) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 64 * i + 16 * k));
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + 64 * i + 16 * k), v);
    }
  }
}

template <void (*Lines)(char*, const char*, size_t)>
void copy_streaming(void* dst, const void* src, size_t n) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  const size_t head = head_bytes(d, n);
  if (head != 0) std::memcpy(d, s, head);
  const size_t lines = (n - head) / 64, body = lines * 64;
  if (lines != 0) Lines(d + head, s + head, lines);
  if (head + body < n) std::memcpy(d + head + body, s + head + body, n - head - body);
}
#endif

}  // namespace detail

inline const Streaming& streaming() {
  static const Streaming chosen = [] {
#ifdef AOP_CPU_STREAM_X86
    __builtin_cpu_init();
    const int cap = cpu_isa_cap();
    if (cap >= kIsaAny && __builtin_cpu_supports("avx512f")) {
      return Streaming{&detail::copy_streaming<detail::lines_avx512>, "avx512"};
    }
    if (cap >= kIsaAvx2 && __builtin_cpu_supports("avx2")) {
      return Streaming{&detail::copy_streaming<detail::lines_avx2>, "avx2"};
    }
    return Streaming{&detail::copy_streaming<detail::lines_sse2>, "sse2"};
#else
    return Streaming{&detail::copy_ordinary, "none"};
#endif
  }();
  return chosen;
}

}  // namespace aop::cpu_stream
