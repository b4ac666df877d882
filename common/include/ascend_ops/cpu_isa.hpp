// The widest x86-64 vector ISA an op's CPU kernel may pick, as ASCEND_OPS_CPU_ISA caps it: tests
// and benchmarks run every build of a kernel on one machine (ASCEND_OPS_CPU_ISA=avx2, =baseline).
// The kernel still checks what the CPU supports; the cap only lowers its choice.
#pragma once
#include <cstdlib>
#include <cstring>

namespace aop {

constexpr int kIsaBaseline = 0;  // ASCEND_OPS_CPU_ISA=baseline: the build's default ISA (SSE2)
constexpr int kIsaAvx2 = 1;      // ASCEND_OPS_CPU_ISA=avx2: up to AVX2 (with FMA, F16C)
constexpr int kIsaAny = 2;       // unset (or any other value): the CPU's best

// The cap a value of ASCEND_OPS_CPU_ISA (nullptr: unset) means.
inline int cpu_isa_cap_of(const char* value) {
  if (value != nullptr && std::strcmp(value, "baseline") == 0) return kIsaBaseline;
  if (value != nullptr && std::strcmp(value, "avx2") == 0) return kIsaAvx2;
  return kIsaAny;
}

// The process's cap, read once (kernels choose their build once).
inline int cpu_isa_cap() {
  static const int cap = cpu_isa_cap_of(std::getenv("ASCEND_OPS_CPU_ISA"));
  return cap;
}

// Whether the cap lets a kernel take the CPU's best and the CPU has AVX-512 F, BW, VL and DQ:
// what every op's AVX-512 kernel needs besides its own extension (a caller adds e.g.
// `&& __builtin_cpu_supports("avx512bf16")`: the builtin takes only a literal).
inline bool cpu_avx512_core() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return cpu_isa_cap() >= kIsaAny && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#else
  return false;
#endif
}

}  // namespace aop
