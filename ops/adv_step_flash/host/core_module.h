// Pieces of the `_core` module shared between its source files.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>

#include "host/adv_step_flash.h"

namespace aop::adv_step_flash {

#ifdef AOP_WITH_EMU
constexpr bool kHasEmu = true;
#else
constexpr bool kHasEmu = false;
#endif

Args numpy_args(int64_t num_seqs, int64_t num_queries, int64_t block_size, const pybind11::array& input_tokens,
                const pybind11::array& sampled_token_ids, const pybind11::array& input_positions,
                const pybind11::array& seq_lens, const pybind11::array& slot_mapping,
                const pybind11::array& block_tables);

// Adds run_emu (the AscendC kernel through the emulator) when the emulator build is on.
void bind_emu(pybind11::module_& m);

// Adds run_npu_sim (the NPU host path on the simulated Ascend runtime) in the simulated build.
void bind_npu_sim(pybind11::module_& m);

}  // namespace aop::adv_step_flash
