// ascend_ops/cpu_isa.hpp: what each ASCEND_OPS_CPU_ISA value caps.
#include "aop_test.h"
#include "ascend_ops/cpu_isa.hpp"

namespace {

TEST(cpu_isa_cap_of_each_value) {
  CHECK_EQ(aop::cpu_isa_cap_of(nullptr), aop::kIsaAny);
  CHECK_EQ(aop::cpu_isa_cap_of("baseline"), aop::kIsaBaseline);
  CHECK_EQ(aop::cpu_isa_cap_of("avx2"), aop::kIsaAvx2);
  CHECK_EQ(aop::cpu_isa_cap_of("avx512"), aop::kIsaAny);
  CHECK_EQ(aop::cpu_isa_cap_of("AVX2"), aop::kIsaAny);  // exact names only
  CHECK(aop::kIsaBaseline < aop::kIsaAvx2 && aop::kIsaAvx2 < aop::kIsaAny);
}

}  // namespace
