// Pieces of the `_core` module shared between its source files.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "host/lightning_indexer.h"

namespace aop::lightning_indexer {

#ifdef AOP_WITH_EMU
constexpr bool kHasEmu = true;
#else
constexpr bool kHasEmu = false;
#endif

// The op's inputs as host views of NumPy arrays; the outputs are filled in by the caller.
Args numpy_args(const pybind11::array& query, const pybind11::array& key, const pybind11::array& weights,
                const std::optional<pybind11::array>& lengths_q, const std::optional<pybind11::array>& lengths_k,
                const std::optional<pybind11::array>& block_table, const std::string& layout_query,
                const std::string& layout_key, int64_t sparse_count, int64_t sparse_mode, const std::string& dtype);

// Adds run_emu (the AscendC kernel through the emulator) when the emulator build is on.
void bind_emu(pybind11::module_& m);

// Adds run_npu_sim (the NPU host path on the simulated Ascend runtime) in the simulated build.
void bind_npu_sim(pybind11::module_& m);

}  // namespace aop::lightning_indexer
