"""ctypes only loads the library RTLD_GLOBAL and checks its ABI; every call goes through pybind11 (_runtime).

Loading the library file first is what lets ``$ASCEND_OPS_COMMON_LIB`` choose the copy: the
binding, like every op's extension modules, links the library by its soname, and the dynamic
linker binds it to the copy already loaded. The functions below are what ``ascend_ops.common``
exports: they check their arguments, return plain values (dicts, a frozen dataclass) and raise
the Python exception a C status names (ValueError, TypeError, IndexError, RuntimeError,
MemoryError) with the library's message.
"""

from __future__ import annotations

import ctypes
import importlib
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import List, Optional, TypedDict

from ._paths import _INSTALL_HINT, LIB_NAME, library_path
from .errors import AbiMismatch, CommonLibraryError

__all__ = [
    "ABI",
    "CACHE_NAMES",
    "CacheStats",
    "PoolStats",
    "Platform",
    "library",
    "library_file",
    "common_version",
    "common_abi",
    "cache_stats",
    "pool_stats",
    "set_cache_capacity",
    "clear_caches",
    "reset_cache_stats",
    "trim_default_pool",
    "platform_presets",
    "platform_preset",
    "current_platform",
    "num_threads",
    "set_num_threads",
    "check_errors",
]

#: The C ABI (``AOP_COMMON_ABI`` in version.h) this Python package speaks.
ABI = 1
#: The process-wide caches every op uses, by the name the registry reports.
CACHE_NAMES = ("tiling", "operator")

_BINDING = f"{__package__}._runtime"

# --- loading -------------------------------------------------------------------------------
_lock = threading.Lock()
_binding: Optional[ModuleType] = None
_lib_file: Optional[Path] = None


def _not_this_package(path: Path, missing: str) -> CommonLibraryError:
    return CommonLibraryError(
        f"{path} does not export {missing}: the library is older than or different from "
        f"this ascend_ops.common Python package (C ABI {ABI}); reinstall "
        f"ascend-op-common so its Python part and its library come from one build"
    )


def _load_checked(path: Path) -> None:
    """dlopen ``path`` RTLD_GLOBAL and compare its ``aop_common_abi()`` with :data:`ABI`."""
    try:
        lib = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
    except OSError as exc:
        raise CommonLibraryError(f"cannot load {path}: {exc}") from exc
    for name in ("aop_common_abi", "aop_common_version"):
        if not hasattr(lib, name):
            raise _not_this_package(path, name)
    lib.aop_common_abi.restype = ctypes.c_int
    lib.aop_common_version.restype = ctypes.c_char_p
    abi = int(lib.aop_common_abi())
    if abi != ABI:
        version = lib.aop_common_version().decode()
        raise AbiMismatch(
            f"{path} is ascend-op-common {version} with C ABI {abi}, but the "
            f"ascend_ops.common Python package speaks C ABI {ABI}: reinstall "
            f"ascend-op-common so its Python part and its library match"
        )


def _binding_load_error(path: Path, exc: ImportError) -> CommonLibraryError:
    symbol = re.search(r"undefined symbol: (\w+)", str(exc))
    if symbol:  # the library lacks a function the binding calls
        return _not_this_package(path, symbol.group(1))
    return CommonLibraryError(f"cannot load {_BINDING} for {path}: {exc}")


def _check_binding(binding: ModuleType, path: Path) -> None:
    """The binding was built for :data:`ABI` and calls the copy of the library at ``path``."""
    if binding.COMMON_ABI != ABI:
        raise AbiMismatch(
            f"{_BINDING} was built for C ABI {binding.COMMON_ABI}, but the ascend_ops.common "
            f"Python package speaks C ABI {ABI}: reinstall ascend-op-common so its Python part "
            f"and its binary parts come from one build"
        )
    bound = Path(binding.library_file())
    if bound.resolve() != path.resolve():
        raise CommonLibraryError(
            f"{_BINDING} calls {bound}, not the loaded {path}: two copies of {LIB_NAME} would "
            f"keep two sets of caches and pools. Import {_BINDING} only through "
            f"ascend_ops.common.library()"
        )


def _import_binding(path: Path) -> ModuleType:
    try:
        binding = importlib.import_module(_BINDING)
    except ModuleNotFoundError as exc:
        if exc.name != _BINDING:
            raise
        raise CommonLibraryError(f"{_BINDING} (the binding of {LIB_NAME}) is not built: "
                                 f"{_INSTALL_HINT}") from exc
    except ImportError as exc:
        raise _binding_load_error(path, exc) from exc
    _check_binding(binding, path)
    return binding


def library() -> ModuleType:
    """Load ``libascend_ops_common.so`` once and return its binding, ``ascend_ops.common._runtime``.

    The library is loaded with ``RTLD_GLOBAL`` before the binding and before any op's extension
    module, so all of them bind to this one copy (one tiling cache, one operator cache, one
    workspace pool per process).

    Returns
    -------
    module
        The pybind11 module whose functions call the library.

    Raises
    ------
    CommonLibraryError
        If the library or its binding is missing, cannot be loaded, or lacks a symbol of the C
        interface, or if the binding is bound to another copy of the library.
    AbiMismatch
        If the library's ``aop_common_abi()`` or the binding's ``COMMON_ABI`` is not the ABI
        this Python package speaks.
    """
    global _binding, _lib_file
    if _binding is not None:
        return _binding
    with _lock:
        if _binding is None:
            path = library_path()
            _load_checked(path)
            _binding, _lib_file = _import_binding(path), path
    return _binding


def library_file() -> Optional[Path]:
    """Return the path of the loaded library, or None if it was not loaded yet."""
    return _lib_file


# --- version -------------------------------------------------------------------------------
def common_version() -> str:
    """Return the library's version string, e.g. ``"0.1.0"``."""
    return library().common_version()


def common_abi() -> int:
    """Return the library's C ABI number (``AOP_COMMON_ABI``)."""
    return library().common_abi()


# --- caches --------------------------------------------------------------------------------
class CacheStats(TypedDict):
    """Counters of one cache (``aop_cache_stats``)."""

    name: str
    capacity: int
    size: int
    hits: int
    misses: int
    inserts: int
    evictions: int


def _cache(which: str):
    """The binding's handle on the tiling or the operator cache."""
    lib = library()
    handles = {"tiling": lib.tiling_cache, "operator": lib.operator_cache}
    if which not in handles:
        raise ValueError(f"cache should be one of {list(CACHE_NAMES)}, got {which!r}")
    return handles[which]()


def _selected(which: Optional[str]) -> List[str]:
    return list(CACHE_NAMES) if which is None else [which]


def cache_stats() -> List[CacheStats]:
    """Return the counters of every live cache, in creation order.

    The tiling and operator caches are created first if nothing used them yet, so they are
    always listed.

    Returns
    -------
    list of dict
        One dict per cache: name, capacity, size, hits, misses, inserts, evictions.
    """
    return library().cache_stats()


def set_cache_capacity(which: str, n: int) -> None:
    """Bound a process-wide cache to ``n`` entries, evicting the least recently used.

    Parameters
    ----------
    which : {"tiling", "operator"}
        The cache.
    n : int
        The new capacity (entries), ``0 <= n < 2**64``; the library may reject values it
        cannot use.

    Raises
    ------
    ValueError
        For an unknown cache or a capacity the library refuses.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"set_cache_capacity: n should be an int >= 0, got {n!r}")
    if n >= 2**64:
        raise ValueError(f"set_cache_capacity: n should be below 2**64, got {n!r}")
    _cache(which).set_capacity(n)


def clear_caches(which: Optional[str] = None, *, reset_stats: bool = False) -> None:
    """Drop the entries of the tiling and operator caches (or of one of them).

    Parameters
    ----------
    which : {"tiling", "operator"}, optional
        One cache; both when omitted.
    reset_stats : bool
        Also zero the hit/miss/insert/eviction counters (kept by default).
    """
    for name in _selected(which):
        cache = _cache(name)
        cache.clear()
        if reset_stats:
            cache.reset_stats()


def reset_cache_stats(which: Optional[str] = None) -> None:
    """Zero the counters of the tiling and operator caches (or of one), keeping entries."""
    for name in _selected(which):
        _cache(name).reset_stats()


# --- workspace pools -----------------------------------------------------------------------
class PoolStats(TypedDict):
    """Counters of one workspace pool (``aop_pool_stats``)."""

    name: str
    limit_bytes: int
    in_use_bytes: int
    cached_bytes: int
    peak_bytes: int
    allocations: int
    deallocations: int
    reuses: int
    acquires: int
    live_blocks: int


def pool_stats() -> List[PoolStats]:
    """Return the counters of every live workspace pool (the default pool first).

    Returns
    -------
    list of dict
        One dict per pool: name, limit_bytes, in_use_bytes, cached_bytes, peak_bytes,
        allocations, deallocations, reuses, acquires, live_blocks.
    """
    return library().pool_stats()


def trim_default_pool() -> None:
    """Free every cached (not in use) block of the process-wide CPU workspace pool."""
    library().trim_default_pool()


# --- platforms -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Platform:
    """A platform ops tile for (``aop_platform``).

    Attributes
    ----------
    soc, family : str
        E.g. ``"Ascend910B2"``, ``"Atlas A2"``.
    aiv_cores, aic_cores : int
        AI vector and AI cube core counts.
    ub_bytes, l1_bytes, l0a_bytes, l0b_bytes, l0c_bytes : int
        Unified buffer (per vector core) and cube buffer sizes in bytes.
    is_real_device : bool
        True when queried from a device through CANN, False for a preset.
    """

    soc: str
    family: str
    aiv_cores: int
    aic_cores: int
    ub_bytes: int
    l1_bytes: int
    l0a_bytes: int
    l0b_bytes: int
    l0c_bytes: int
    is_real_device: bool


def platform_presets() -> List[Platform]:
    """Return every platform preset the library knows (Atlas A2 / A3 parts)."""
    return [Platform(**fields) for fields in library().platform_presets()]


def platform_preset(name: str) -> Platform:
    """Return the preset named ``name`` (case-insensitive), e.g. ``"Ascend910B4"``.

    Raises
    ------
    ValueError
        For an unknown name; the message lists the known ones.
    """
    if not isinstance(name, str):
        raise TypeError(f"platform_preset: name should be a str, got {type(name).__name__}")
    return Platform(**library().platform_preset(name))


def current_platform() -> Platform:
    """Return the platform ops tile for in this process.

    The real device where CANN found one, else the preset named by ``$ASCEND_OPS_PLATFORM``,
    else Ascend910B2.

    Raises
    ------
    ValueError
        If ``$ASCEND_OPS_PLATFORM`` names no preset.
    """
    return Platform(**library().current_platform())


# --- threads (parallel.h) ------------------------------------------------------------------
def num_threads() -> int:
    """Threads of common's CPU worker pool: ASCEND_OPS_NUM_THREADS, :func:`set_num_threads`, or
    one per hardware thread. (A call through torch runs on torch's pool with
    ``torch.get_num_threads()`` threads unless a count was chosen explicitly.)"""
    return library().num_threads()


def set_num_threads(n: int) -> None:
    """Choose the CPU kernels' thread count explicitly (common's pool, for every front door,
    torch included); ``n <= 0`` goes back to the default (ASCEND_OPS_NUM_THREADS if set, else
    torch's pool for torch calls and one thread per hardware thread otherwise)."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"set_num_threads: n should be an int but is {type(n).__name__}")
    if not -(2**31) <= n < 2**31:
        raise ValueError(f"set_num_threads: n should fit in int32 but is {n}")
    library().set_num_threads(n)


# --- asynchronous errors (async_error.h) ---------------------------------------------------
def check_errors(synchronize: bool = True) -> None:
    """Raise the first error an earlier op call found after it returned: an NPU kernel's
    in-kernel checks (a bad slot, block id or length) or checks that ran in a framework's queued
    task. The exception is the one the op raises for the same input when it checks
    synchronously (same class, same message naming the op, argument, index and value); the
    call's outputs were left untouched. With ``synchronize`` (the default), every device stream
    an op used is synchronised first, so every earlier call is covered; without it, only errors
    already known to the host are raised. Returns None when there is no error. The slot holds
    one error (the first); raising it clears it."""
    library().check_errors(bool(synchronize))
