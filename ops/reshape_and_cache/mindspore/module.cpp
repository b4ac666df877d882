// The `_ms` module: PyNative entry, the Graph-mode check and the aot symbol's name.
#include "include/pynative/utils/pyboost/custom/tensor.h"  // the ms::Tensor caster
#include "pybind11/stl.h"                                  // shapes and dtype names

#include "ascend_ops/mindspore_pynative.hpp"
#include "ascend_ops/module_info.hpp"
#include "graph.h"
#include "op.h"

PYBIND11_MODULE(MS_EXTENSION_NAME, m) {
  namespace py = pybind11;
  using namespace aop::reshape_and_cache;
  m.doc() = "ascend-ops reshape_and_cache: MindSpore PyNative and Graph-mode (aot) entries";
  aop::set_module_info(m);
  aop::ms_adapter::bind_pynative<Op>(m);  // PyNative, from the description (op.h)
  m.def("validate_signature", &ms_graph::validate_signature, py::arg("shapes"), py::arg("dtypes"),
        py::arg("cache_mode") = 0, py::arg("head_num") = 0,
        "Graph-mode compile-time check of the shapes and dtype names of (key, value, key_cache, "
        "value_cache, slot_mapping) or, key-only, (key, key_cache, slot_mapping); an attrs input "
        "(int64 [2]) may follow and is ignored here; raises ValueError / TypeError.");
  m.attr("AOT_SYMBOL") = ms_graph::kAotSymbol;
}
