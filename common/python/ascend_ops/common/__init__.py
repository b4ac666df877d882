"""ascend-op-common: the shared runtime every ascend-ops operator links against.

The native library (``lib/libascend_ops_common.so``: caches, workspace pool, platform
presets) is loaded on first use, not at import; no framework is imported here.

Submodules: :mod:`~ascend_ops.common.loader` (checked import of an op's native modules),
:mod:`~ascend_ops.common.registry` (installed ops), :mod:`~ascend_ops.common.frameworks`
(what this machine has), :mod:`~ascend_ops.devkit.testing` (golden comparison, bfloat16),
:mod:`~ascend_ops.devkit.bench` (benchmark harness), :mod:`~ascend_ops.common.dtypes`,
:mod:`~ascend_ops.common.cli` (the ``ascend-ops`` command).
"""

from __future__ import annotations

from pathlib import Path

from ._clib import (
    CACHE_NAMES,
    Platform,
    cache_stats,
    check_errors,
    clear_caches,
    common_abi,
    common_version,
    current_platform,
    library,
    num_threads,
    platform_preset,
    platform_presets,
    pool_stats,
    reset_cache_stats,
    set_cache_capacity,
    set_num_threads,
    trim_default_pool,
)
from ._meta import dist_version
from ._paths import data_dir
from .errors import (
    AbiMismatch,
    AdapterNotBuilt,
    CommonLibraryError,
    FrameworkMissing,
    FrameworkVersionMismatch,
    NativeImportError,
    NativeLoadError,
    OpNotInstalled,
)
from .loader import load_native
from .registry import OpInfo, installed_ops

__all__ = [
    "__version__",
    "cmake_dir",
    "include_dir",
    "lib_dir",
    "library",
    "CACHE_NAMES",
    "common_version",
    "common_abi",
    "cache_stats",
    "check_errors",
    "pool_stats",
    "set_cache_capacity",
    "num_threads",
    "set_num_threads",
    "clear_caches",
    "reset_cache_stats",
    "trim_default_pool",
    "Platform",
    "platform_presets",
    "platform_preset",
    "current_platform",
    "load_native",
    "OpInfo",
    "installed_ops",
    "NativeImportError",
    "CommonLibraryError",
    "FrameworkMissing",
    "FrameworkVersionMismatch",
    "OpNotInstalled",
    "AdapterNotBuilt",
    "AbiMismatch",
    "NativeLoadError",
]

_DISTRIBUTION = "ascend-op-common"


def cmake_dir() -> Path:
    """Return the directory holding ``AscendOpsCommonConfig.cmake``.

    Ops pass it to CMake: ``-DAscendOpsCommon_DIR=$(python -c "import ascend_ops.common as c;
    print(c.cmake_dir())")``.

    Raises
    ------
    FileNotFoundError
        If the native part of the package is not installed.
    """
    return data_dir("cmake")


def include_dir() -> Path:
    """Return the directory holding the ``ascend_ops/*.h`` headers (see :func:`cmake_dir`)."""
    return data_dir("include")


def lib_dir() -> Path:
    """Return the directory holding ``libascend_ops_common.so`` (see :func:`cmake_dir`)."""
    return data_dir("lib")


def _version() -> str:
    version = dist_version(_DISTRIBUTION)
    if version is not None:
        return version
    try:
        return common_version()
    except NativeImportError:
        return "0+unknown"


def __getattr__(name: str) -> object:
    # __version__ is computed on first access, keeping `import ascend_ops.common` cheap.
    if name == "__version__":
        value = _version()
        globals()["__version__"] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
