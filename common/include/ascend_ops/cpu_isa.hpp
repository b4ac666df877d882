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

}  // namespace aop
