// Pieces of the `_core` module shared between its source files.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "host/reshape_and_cache.h"

namespace aop::reshape_and_cache {

#ifdef AOP_WITH_EMU
constexpr bool kHasEmu = true;
#else
constexpr bool kHasEmu = false;
#endif

// value / value_cache: an array or None (a key-only cache).
Args numpy_args(const pybind11::array& key, const pybind11::object& value,
                const pybind11::array& key_cache, const pybind11::object& value_cache,
                const pybind11::array& slot_mapping, const std::string& dtype, int64_t cache_mode,
                int64_t head_num);

// Adds run_emu (the AscendC kernel through the emulator) when the emulator build is on.
void bind_emu(pybind11::module_& m);

// Adds run_npu_sim (the NPU host path on the simulated Ascend runtime) in the simulated build.
void bind_npu_sim(pybind11::module_& m);

}  // namespace aop::reshape_and_cache
