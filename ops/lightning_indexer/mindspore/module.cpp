// The `_ms` module: PyNative entry, the Graph-mode compile-time helpers and the aot symbol's name.
#include "include/pynative/utils/pyboost/custom/tensor.h"  // the ms::Tensor caster
#include "pybind11/stl.h"                                  // optional tensors, shapes and dtype names

#include "ascend_ops/mindspore_pynative.hpp"
#include "graph.h"
#include "op.h"

PYBIND11_MODULE(MS_EXTENSION_NAME, m) {
  namespace py = pybind11;
  using namespace aop::lightning_indexer;
  aop::ms_adapter::init_module<Op>(m);  // doc, versions, PyNative (from the description, op.h)
  m.def("layout_code", &ms_graph::layout_code, py::arg("name"), py::arg("arg"), py::arg("is_key"),
        "The aot kernel's code of a layout name; ValueError for an unknown one.");
  m.def("output_shape", &ms_graph::output_shape, py::arg("shapes"), py::arg("dtypes"), py::arg("layout_query"),
        py::arg("layout_key"), py::arg("sparse_count"), py::arg("sparse_mode"), py::arg("present"),
        "Graph-mode compile-time check of the six tensor inputs' shapes and dtype names and the attributes; "
        "returns the output shape ([] when a shape is dynamic). Raises ValueError / TypeError.");
  m.attr("AOT_SYMBOL") = ms_graph::kAotSymbol;
}
