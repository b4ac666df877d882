// What `_core` shows of the CPU kernel besides common's functions (tests and benchmarks): the
// int8 dot kernel's ISA (ASCEND_OPS_CPU_ISA caps it).
#include <pybind11/pybind11.h>

#include "ascend_ops/numpy_op.hpp"
#include "host/liq.h"

namespace aop::lightning_indexer_quant {
namespace {

void bind_cpu_isa(pybind11::module_& m) { m.attr("CPU_ISA") = cpu_isa(); }

const numpy_adapter::RegisterCoreExtension kCpuIsa(&bind_cpu_isa);

}  // namespace
}  // namespace aop::lightning_indexer_quant
