// What `_core` shows of the CPU kernel besides common's functions (tests and benchmarks): the
// micro-kernel's ISA, whether the AVX512_BF16 key-major kernel is there, and cpu_plan, the work
// split the CPU kernel takes for given inputs.
#include <pybind11/pybind11.h>

#include "ascend_ops/numpy_op.hpp"
#include "host/cpu_kernel.h"
#include "host/score_keys.h"
#include "op.h"

namespace aop::lightning_indexer {
namespace {

namespace py = pybind11;

void bind_cpu_introspection(py::module_& m) {
  m.attr("CPU_ISA") = score_row_isa();
  // True where bfloat16 keys are scored by the AVX512_BF16 key-major kernel (host/score_keys.cpp).
  m.attr("CPU_BF16_KERNEL") = select_score_keys_bf16() != nullptr;
  m.def(
      "cpu_plan",
      [](const py::args& args, const py::kwargs& kwargs) {
        using namespace aop::numpy_adapter;
        const Parsed p = parse<Op>("cpu_plan", args, kwargs, {{"dtype", py::str("")}});
        const Args a = host_args<Op>(p, p.options["dtype"].cast<std::string>());
        const Dims d = validate(a, false);
        const CpuPlan plan = cpu_plan(a, d);
        py::dict out;
        out["key_tile"] = plan.key_tile;
        out["row_block"] = plan.row_block;
        out["key_chunk"] = plan.key_chunk;
        out["threads"] = plan.threads;
        out["isa"] = score_row_isa();
        out["bf16_kernel"] =
            a.query.dtype == AOP_DTYPE_BFLOAT16 && d.head_dim % 2 == 0 && select_score_keys_bf16() != nullptr;
        return out;
      },
      "cpu_plan(<the op's arguments>, dtype='')\n"
      "How the CPU kernel splits the work for these inputs (from the tiling cache), as a dict.");
}

const numpy_adapter::RegisterCoreExtension kCpuIntrospection(&bind_cpu_introspection);

}  // namespace
}  // namespace aop::lightning_indexer
