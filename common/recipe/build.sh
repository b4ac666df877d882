#!/bin/bash
# conda-build runs this in a copy of common/ with $PYTHON, $PREFIX, $CPU_COUNT, ... set.
set -euxo pipefail

export CMAKE_GENERATOR=Ninja
export CMAKE_BUILD_PARALLEL_LEVEL="${CPU_COUNT:-1}"
"$PYTHON" -m pip install . --no-deps --no-build-isolation -vv
