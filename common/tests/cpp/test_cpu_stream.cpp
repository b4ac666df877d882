// ascend_ops/cpu_stream.hpp: every ISA build of the streaming copy writes exactly the bytes of a
// memcpy (every head / body / tail split: destination offsets 0..63, lengths around line
// multiples) and nothing outside [dst, dst + n); the policy's values; the LLC size.
#include <cstdint>
#include <cstring>
#include <vector>

#include "aop_test.h"
#include "ascend_ops/cpu_stream.hpp"

namespace {

namespace cs = aop::cpu_stream;

// Copies of n bytes to every offset of a 64-byte-aligned buffer, compared with memcpy's result;
// the guard bytes around each copy must keep their values.
void check_copy(cs::CopyFn copy) {
  std::vector<uint8_t> src(1024 + 64);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 37 + 11);
  alignas(64) static uint8_t got[1024 + 256];
  alignas(64) static uint8_t want[1024 + 256];
  const size_t lengths[] = {0, 1, 15, 16, 31, 32, 63, 64, 65, 127, 128, 129, 191, 240, 255, 256, 257, 768, 1000};
  for (size_t offset = 0; offset < 64; ++offset) {
    for (size_t n : lengths) {
      for (size_t s = 0; s < 3; ++s) {  // source misalignment too
        std::memset(got, 0xA5, sizeof got);
        std::memset(want, 0xA5, sizeof want);
        copy(got + 64 + offset, src.data() + s, n);
        cs::stream_fence();
        std::memcpy(want + 64 + offset, src.data() + s, n);
        if (std::memcmp(got, want, sizeof got) != 0) {
          CHECK(false);
          return;
        }
      }
    }
  }
}

TEST(streaming_copy_of_every_build_equals_memcpy) {
  check_copy(&cs::detail::copy_ordinary);
#ifdef AOP_CPU_STREAM_X86
  __builtin_cpu_init();
  check_copy(&cs::detail::copy_streaming<cs::detail::lines_sse2>);
  if (__builtin_cpu_supports("avx2")) check_copy(&cs::detail::copy_streaming<cs::detail::lines_avx2>);
  if (__builtin_cpu_supports("avx512f")) check_copy(&cs::detail::copy_streaming<cs::detail::lines_avx512>);
#endif
  check_copy(cs::streaming().copy);
}

TEST(streaming_build_follows_the_isa_cap) {
  const char* isa = cs::streaming().isa;
#ifdef AOP_CPU_STREAM_X86
  const int cap = aop::cpu_isa_cap();
  if (cap == aop::kIsaBaseline) CHECK(std::strcmp(isa, "sse2") == 0);
  if (cap == aop::kIsaAvx2) CHECK(std::strcmp(isa, "avx512") != 0);
#endif
  CHECK(isa != nullptr);
}

TEST(policy_of_each_value) {
  CHECK(cs::policy_of(nullptr) == cs::Policy::kAuto);
  CHECK(cs::policy_of("always") == cs::Policy::kAlways);
  CHECK(cs::policy_of("never") == cs::Policy::kNever);
  CHECK(cs::policy_of("auto") == cs::Policy::kAuto);
  CHECK(cs::policy_of("ALWAYS") == cs::Policy::kAuto);  // exact names only
}

TEST(size_rule_streams_only_above_the_llc) {
  const int64_t llc = cs::llc_bytes();
  CHECK(llc >= (int64_t{64} << 10));
  if (cs::policy() == cs::Policy::kAuto) {
    CHECK(!cs::stream_rows(llc));
    CHECK(cs::stream_rows(llc + 1));
    CHECK(!cs::stream_rows(4096));
  }
}

}  // namespace
