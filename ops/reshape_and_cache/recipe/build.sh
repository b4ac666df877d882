#!/bin/bash
# conda-build runs this in a copy of the op's directory with $PYTHON, $PREFIX, $CPU_COUNT, ...
# set, common installed in $PREFIX, and the variant's AOP_WITH_* switches (build/script_env).
set -euxo pipefail

export CMAKE_GENERATOR=Ninja
export CMAKE_BUILD_PARALLEL_LEVEL="${CPU_COUNT:-1}"
args=(
  "--config-settings=cmake.define.AOP_WITH_TORCH=${AOP_WITH_TORCH}"
  "--config-settings=cmake.define.AOP_WITH_MINDSPORE=${AOP_WITH_MINDSPORE}"
  "--config-settings=cmake.define.AOP_WITH_NPU=${AOP_WITH_NPU}"
  "--config-settings=cmake.define.AOP_WITH_TORCH_NPU=${AOP_WITH_TORCH_NPU}"
)
if [[ -n "${AOP_TORCH_NPU_ROOT:-}" ]]; then
  args+=("--config-settings=cmake.define.AOP_TORCH_NPU_ROOT=${AOP_TORCH_NPU_ROOT}")
fi
"$PYTHON" -m pip install . --no-deps --no-build-isolation -vv "${args[@]}"
