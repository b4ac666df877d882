// The `_ms` module: PyNative entry, the Graph-mode check and the aot symbol's name.
#include "include/pynative/utils/pyboost/custom/tensor.h"  // the ms::Tensor caster
#include "pybind11/stl.h"                                  // shapes and dtype names

#include "ascend_ops/mindspore_pynative.hpp"
#include "ascend_ops/module_info.hpp"
#include "graph.h"
#include "op.h"

PYBIND11_MODULE(MS_EXTENSION_NAME, m) {
  namespace py = pybind11;
  using namespace aop::adv_step_flash;
  m.doc() = "ascend-ops adv_step_flash: MindSpore PyNative and Graph-mode (aot) entries";
  aop::set_module_info(m);
  aop::ms_adapter::bind_pynative<Op>(m);  // PyNative, from the description (op.h)
  m.def("validate_signature", &ms_graph::validate_signature, py::arg("ints"), py::arg("shapes"), py::arg("dtypes"),
        "Graph-mode compile-time check of (num_seqs, num_queries, block_size) and the shapes and dtype names of "
        "(input_tokens, sampled_token_ids, input_positions, seq_lens, slot_mapping, block_tables); raises "
        "ValueError / TypeError.");
  m.attr("AOT_SYMBOL") = ms_graph::kAotSymbol;
}
