// The `_ms` module: common's start (PyNative entry) and this op's Graph-mode entries.
#include "include/pynative/utils/pyboost/custom/tensor.h"  // the ms::Tensor caster
#include "pybind11/stl.h"                                  // shapes and dtype names

#include "ascend_ops/mindspore_pynative.hpp"
#include "graph.h"
#include "op.h"

PYBIND11_MODULE(MS_EXTENSION_NAME, m) {
  namespace py = pybind11;
  using namespace aop::reshape_and_cache;
  aop::ms_adapter::init_module<Op>(m);  // doc, versions, PyNative (from the description, op.h)
  m.def("validate_signature", &ms_graph::validate_signature, py::arg("shapes"), py::arg("dtypes"),
        py::arg("cache_mode") = 0, py::arg("head_num") = 0,
        "Graph-mode compile-time check of the shapes and dtype names of (key, value, key_cache, "
        "value_cache, slot_mapping) or, key-only, (key, key_cache, slot_mapping); an attrs input "
        "(int64 [2]) may follow and is ignored here; raises ValueError / TypeError.");
  m.attr("AOT_SYMBOL") = ms_graph::kAotSymbol;
}
