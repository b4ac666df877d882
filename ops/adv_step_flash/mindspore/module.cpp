// The `_ms` module: common's start (PyNative entry) and this op's Graph-mode entries.
#include "include/pynative/utils/pyboost/custom/tensor.h"  // the ms::Tensor caster
#include "pybind11/stl.h"                                  // shapes and dtype names

#include "ascend_ops/mindspore_pynative.hpp"
#include "graph.h"
#include "op.h"

PYBIND11_MODULE(MS_EXTENSION_NAME, m) {
  namespace py = pybind11;
  using namespace aop::adv_step_flash;
  aop::ms_adapter::init_module<Op>(m);  // doc, versions, PyNative (from the description, op.h)
  m.def("validate_signature", &ms_graph::validate_signature, py::arg("ints"), py::arg("shapes"), py::arg("dtypes"),
        "Graph-mode compile-time check of (num_seqs, num_queries, block_size) and the shapes and dtype names of "
        "(input_tokens, sampled_token_ids, input_positions, seq_lens, slot_mapping, block_tables); raises "
        "ValueError / TypeError.");
  m.attr("AOT_SYMBOL") = ms_graph::kAotSymbol;
}
