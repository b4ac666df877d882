// `_core`: the framework-free front door on NumPy arrays (cpu and emu backends), used by the
// Python API for NumPy inputs, by the golden tests and by the benchmarks.
#include <pybind11/pybind11.h>

#include "ascend_ops/module_info.hpp"
#include "ascend_ops/numpy_view.hpp"
#include "ascend_ops/platform.hpp"
#include "host/adv_step_flash.h"
#include "host/core_module.h"

namespace py = pybind11;
using aop::adv_step_flash::Args;

namespace aop::adv_step_flash {

Args numpy_args(int64_t num_seqs, int64_t num_queries, int64_t block_size, const py::array& input_tokens,
                const py::array& sampled_token_ids, const py::array& input_positions, const py::array& seq_lens,
                const py::array& slot_mapping, const py::array& block_tables) {
  constexpr const char* op = "advance_step_flashattn";
  return Args{num_seqs,
              num_queries,
              block_size,
              numpy_view(input_tokens, op, "input_tokens", true),
              numpy_view(sampled_token_ids, op, "sampled_token_ids", false),
              numpy_view(input_positions, op, "input_positions", true),
              numpy_view(seq_lens, op, "seq_lens", true),
              numpy_view(slot_mapping, op, "slot_mapping", true),
              numpy_view(block_tables, op, "block_tables", false)};
}

}  // namespace aop::adv_step_flash

PYBIND11_MODULE(_core, m) {
  m.doc() = "advance_step_flashattn on NumPy arrays: the cpu and emu backends";
  aop::set_module_info(m);
  aop::register_error_translator();
  m.attr("HAS_EMU") = aop::adv_step_flash::kHasEmu;

  m.def(
      "run_cpu",
      [](int64_t num_seqs, int64_t num_queries, int64_t block_size, py::array input_tokens,
         const py::array& sampled_token_ids, py::array input_positions, py::array seq_lens, py::array slot_mapping,
         const py::array& block_tables) {
        const Args args = aop::adv_step_flash::numpy_args(num_seqs, num_queries, block_size, input_tokens,
                                                          sampled_token_ids, input_positions, seq_lens,
                                                          slot_mapping, block_tables);
        aop::adv_step_flash::run_cpu(args);  // microseconds: the GIL is kept
      },
      py::arg("num_seqs"), py::arg("num_queries"), py::arg("block_size"), py::arg("input_tokens"),
      py::arg("sampled_token_ids"), py::arg("input_positions"), py::arg("seq_lens"), py::arg("slot_mapping"),
      py::arg("block_tables"),
      "Advances input_tokens, input_positions, seq_lens and slot_mapping by one step in place (C++ kernel).");

  m.def(
      "tiling",
      [](int64_t num_seqs, int64_t num_queries, int64_t block_size, py::array input_tokens,
         const py::array& sampled_token_ids, py::array input_positions, py::array seq_lens, py::array slot_mapping,
         const py::array& block_tables, const std::string& soc) {
        const Args args = aop::adv_step_flash::numpy_args(num_seqs, num_queries, block_size, input_tokens,
                                                          sampled_token_ids, input_positions, seq_lens,
                                                          slot_mapping, block_tables);
        aop::adv_step_flash::validate(args);
        const auto t = aop::adv_step_flash::tiling(args, aop::platform_preset(soc));
        py::dict d;
        d["num_seqs"] = t.num_seqs;
        d["num_queries"] = t.num_queries;
        d["block_size"] = t.block_size;
        d["max_blocks"] = t.max_blocks;
        d["table_row_stride"] = t.table_row_stride;
        d["token_bytes"] = t.token_bytes;
        d["sampled_bytes"] = t.sampled_bytes;
        d["position_bytes"] = t.position_bytes;
        d["seq_len_bytes"] = t.seq_len_bytes;
        d["slot_bytes"] = t.slot_bytes;
        d["table_bytes"] = t.table_bytes;
        d["block_dim"] = t.block_dim;
        d["seqs_per_core"] = t.seqs_per_core;
        d["cores_with_extra"] = t.cores_with_extra;
        d["chunk_seqs"] = t.chunk_seqs;
        return d;
      },
      py::arg("num_seqs"), py::arg("num_queries"), py::arg("block_size"), py::arg("input_tokens"),
      py::arg("sampled_token_ids"), py::arg("input_positions"), py::arg("seq_lens"), py::arg("slot_mapping"),
      py::arg("block_tables"), py::arg("soc") = "Ascend910B2",
      "The kernel launch tiling for a platform preset, as a dict.");

  aop::adv_step_flash::bind_emu(m);
  aop::adv_step_flash::bind_npu_sim(m);
}
