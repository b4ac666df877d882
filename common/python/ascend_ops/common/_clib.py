"""ctypes binding of ``libascend_ops_common.so`` (the C interface in ``include/ascend_ops``).

The structs below mirror ``cache.h``, ``workspace.h``, ``platform.h`` and ``error.h`` for
:data:`ABI`; the library's own ABI number is checked when it is loaded, so a struct layout
never silently disagrees. The Python-facing functions return plain values (dicts, a frozen
dataclass) and turn a C status into the matching Python exception.
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple, TypedDict

from ._paths import library_path
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

#: The C ABI (``AOP_COMMON_ABI`` in version.h) whose structs this module declares.
ABI = 1
#: The process-wide caches every op uses, by the name the registry reports.
CACHE_NAMES = ("tiling", "operator")

_NAME_BYTES = 64  # AOP_NAME_BYTES
_PLATFORM_NAME_BYTES = 32  # AOP_PLATFORM_NAME_BYTES
_ERROR_MESSAGE_BYTES = 1024  # AOP_ERROR_MESSAGE_BYTES


# --- structs -------------------------------------------------------------------------------
class AopError(ctypes.Structure):
    """``aop_error``: a status code and a NUL-terminated message."""

    _fields_ = [("status", ctypes.c_int), ("message", ctypes.c_char * _ERROR_MESSAGE_BYTES)]


class AopCacheStats(ctypes.Structure):
    """``aop_cache_stats``."""

    _fields_ = [
        ("name", ctypes.c_char * _NAME_BYTES),
        ("capacity", ctypes.c_uint64),
        ("size", ctypes.c_uint64),
        ("hits", ctypes.c_uint64),
        ("misses", ctypes.c_uint64),
        ("inserts", ctypes.c_uint64),
        ("evictions", ctypes.c_uint64),
    ]


class AopPoolStats(ctypes.Structure):
    """``aop_pool_stats``."""

    _fields_ = [
        ("name", ctypes.c_char * _NAME_BYTES),
        ("limit_bytes", ctypes.c_uint64),
        ("in_use_bytes", ctypes.c_uint64),
        ("cached_bytes", ctypes.c_uint64),
        ("peak_bytes", ctypes.c_uint64),
        ("allocations", ctypes.c_uint64),
        ("deallocations", ctypes.c_uint64),
        ("reuses", ctypes.c_uint64),
        ("acquires", ctypes.c_uint64),
        ("live_blocks", ctypes.c_uint64),
    ]


class AopPlatform(ctypes.Structure):
    """``aop_platform``."""

    _fields_ = [
        ("soc", ctypes.c_char * _PLATFORM_NAME_BYTES),
        ("family", ctypes.c_char * _PLATFORM_NAME_BYTES),
        ("aiv_cores", ctypes.c_int32),
        ("aic_cores", ctypes.c_int32),
        ("ub_bytes", ctypes.c_int64),
        ("l1_bytes", ctypes.c_int64),
        ("l0a_bytes", ctypes.c_int64),
        ("l0b_bytes", ctypes.c_int64),
        ("l0c_bytes", ctypes.c_int64),
        ("is_real_device", ctypes.c_int32),
    ]


ALLOCATE_FN = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p)
DEALLOCATE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)
DELETER_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class AopAllocator(ctypes.Structure):
    """``aop_allocator``."""

    _fields_ = [
        ("allocate", ALLOCATE_FN),
        ("deallocate", DEALLOCATE_FN),
        ("ctx", ctypes.c_void_p),
        ("name", ctypes.c_char_p),
    ]


# --- function signatures: name -> (restype, argtypes) ----------------------------------------
_P = ctypes.c_void_p
_ERR = ctypes.POINTER(AopError)
_SIGNATURES: Dict[str, Tuple[object, Sequence[object]]] = {
    # version.h, error.h, dtype.h, hash.h
    "aop_common_version": (ctypes.c_char_p, []),
    "aop_common_abi": (ctypes.c_int, []),
    "aop_status_name": (ctypes.c_char_p, [ctypes.c_int]),
    "aop_dtype_size": (ctypes.c_size_t, [ctypes.c_int]),
    "aop_dtype_name": (ctypes.c_char_p, [ctypes.c_int]),
    "aop_hash_bytes": (ctypes.c_uint64, [_P, ctypes.c_size_t, ctypes.c_uint64]),
    # cache.h
    "aop_tiling_cache": (_P, []),
    "aop_operator_cache": (_P, []),
    "aop_cache_create": (_P, [ctypes.c_char_p, ctypes.c_uint64, _ERR]),
    "aop_cache_destroy": (None, [_P]),
    "aop_cache_set_capacity": (ctypes.c_int, [_P, ctypes.c_uint64, _ERR]),
    "aop_cache_clear": (None, [_P]),
    "aop_cache_reset_stats": (None, [_P]),
    "aop_cache_get_stats": (None, [_P, ctypes.POINTER(AopCacheStats)]),
    "aop_cache_get": (_P, [_P, _P, ctypes.c_size_t]),
    "aop_cache_put": (_P, [_P, _P, ctypes.c_size_t, _P, ctypes.c_size_t, _P, DELETER_FN, _ERR]),
    "aop_value_bytes": (_P, [_P, ctypes.POINTER(ctypes.c_size_t)]),
    "aop_value_object": (_P, [_P]),
    "aop_value_retain": (None, [_P]),
    "aop_value_release": (None, [_P]),
    "aop_cache_registry_size": (ctypes.c_size_t, []),
    "aop_cache_registry_stats": (ctypes.c_int, [ctypes.c_size_t, ctypes.POINTER(AopCacheStats)]),
    # workspace.h
    "aop_host_allocator": (AopAllocator, []),
    "aop_default_pool": (_P, []),
    "aop_pool_create": (_P, [ctypes.c_char_p, ctypes.POINTER(AopAllocator), ctypes.c_uint64, _ERR]),
    "aop_pool_destroy": (None, [_P]),
    "aop_pool_acquire": (_P, [_P, ctypes.c_size_t, _ERR]),
    "aop_pool_trim": (None, [_P]),
    "aop_pool_get_stats": (None, [_P, ctypes.POINTER(AopPoolStats)]),
    "aop_pool_reset_peak": (None, [_P]),
    "aop_block_data": (_P, [_P]),
    "aop_block_size": (ctypes.c_size_t, [_P]),
    "aop_block_retain": (None, [_P]),
    "aop_block_release": (None, [_P]),
    "aop_pool_registry_size": (ctypes.c_size_t, []),
    "aop_pool_registry_stats": (ctypes.c_int, [ctypes.c_size_t, ctypes.POINTER(AopPoolStats)]),
    # parallel.h
    "aop_num_threads": (ctypes.c_int32, []),
    "aop_set_num_threads": (None, [ctypes.c_int32]),
    "aop_num_threads_explicit": (ctypes.c_int32, []),
    # async_error.h
    "aop_async_error_post": (ctypes.c_int, [ctypes.c_int, ctypes.c_char_p]),
    "aop_async_error_pending": (ctypes.c_int, []),
    "aop_async_error_check": (ctypes.c_int, [ctypes.c_int, _ERR]),
    # platform.h
    "aop_platform_preset_count": (ctypes.c_size_t, []),
    "aop_platform_preset_at": (ctypes.c_int, [ctypes.c_size_t, ctypes.POINTER(AopPlatform)]),
    "aop_platform_preset": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(AopPlatform), _ERR]),
    "aop_platform_current": (ctypes.c_int, [ctypes.POINTER(AopPlatform), _ERR]),
}

# aop_status -> Python exception (error.h)
_STATUS_EXCEPTIONS: Dict[int, type] = {
    1: ValueError,
    2: TypeError,
    3: IndexError,
    4: RuntimeError,
    5: MemoryError,
}


# --- loading -------------------------------------------------------------------------------
_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_lib_file: Optional[Path] = None


def _declare(lib: ctypes.CDLL, path: Path) -> None:
    for name, (restype, argtypes) in _SIGNATURES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise CommonLibraryError(
                f"{path} does not export {name}: the library is older than or different from "
                f"this ascend_ops.common Python package (C ABI {ABI}); reinstall "
                f"ascend-op-common so its Python part and its library come from one build"
            ) from None
        fn.restype = restype
        fn.argtypes = list(argtypes)


def library() -> ctypes.CDLL:
    """Load ``libascend_ops_common.so`` once and return it.

    The library is loaded with ``RTLD_GLOBAL`` so that op extension modules that link it
    resolve to this same copy (one tiling cache, one operator cache, one workspace pool per
    process). Every function of the C interface gets its ctypes signature.

    Returns
    -------
    ctypes.CDLL
        The loaded library.

    Raises
    ------
    CommonLibraryError
        If it is missing, cannot be loaded, or lacks a symbol of the C interface.
    AbiMismatch
        If its ``aop_common_abi()`` is not the ABI this Python package declares.
    """
    global _lib, _lib_file
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            path = library_path()
            try:
                lib = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
            except OSError as exc:
                raise CommonLibraryError(f"cannot load {path}: {exc}") from exc
            _declare(lib, path)
            abi = int(lib.aop_common_abi())
            if abi != ABI:
                version = lib.aop_common_version().decode()
                raise AbiMismatch(
                    f"{path} is ascend-op-common {version} with C ABI {abi}, but the "
                    f"ascend_ops.common Python package speaks C ABI {ABI}: reinstall "
                    f"ascend-op-common so its Python part and its library match"
                )
            _lib, _lib_file = lib, path
    return _lib


def library_file() -> Optional[Path]:
    """Return the path of the loaded library, or None if it was not loaded yet."""
    return _lib_file


# --- helpers -------------------------------------------------------------------------------
def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


def _raise_for(status: int, err: AopError, what: str) -> None:
    if status == 0:
        return
    exc_type = _STATUS_EXCEPTIONS.get(int(status), RuntimeError)
    message = _text(err.message) or f"{what} failed with status {status}"
    raise exc_type(message)


def _cache_handle(which: str) -> int:
    lib = library()
    getters: Dict[str, Callable[[], int]] = {
        "tiling": lib.aop_tiling_cache,
        "operator": lib.aop_operator_cache,
    }
    if which not in getters:
        raise ValueError(f"cache should be one of {list(CACHE_NAMES)}, got {which!r}")
    handle = getters[which]()
    if not handle:
        raise RuntimeError(f"ascend-op-common returned no {which} cache")
    return handle


def _selected(which: Optional[str]) -> List[str]:
    return list(CACHE_NAMES) if which is None else [which]


# --- version -------------------------------------------------------------------------------
def common_version() -> str:
    """Return the library's version string, e.g. ``"0.1.0"``."""
    return _text(library().aop_common_version())


def common_abi() -> int:
    """Return the library's C ABI number (``AOP_COMMON_ABI``)."""
    return int(library().aop_common_abi())


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


def _cache_dict(s: AopCacheStats) -> CacheStats:
    return CacheStats(
        name=_text(s.name),
        capacity=s.capacity,
        size=s.size,
        hits=s.hits,
        misses=s.misses,
        inserts=s.inserts,
        evictions=s.evictions,
    )


def cache_stats() -> List[CacheStats]:
    """Return the counters of every live cache, in creation order.

    The tiling and operator caches are created first if nothing used them yet, so they are
    always listed.

    Returns
    -------
    list of dict
        One dict per cache: name, capacity, size, hits, misses, inserts, evictions.
    """
    lib = library()
    for which in CACHE_NAMES:
        _cache_handle(which)
    out: List[CacheStats] = []
    for index in range(lib.aop_cache_registry_size()):
        s = AopCacheStats()
        if lib.aop_cache_registry_stats(index, ctypes.byref(s)):
            out.append(_cache_dict(s))
    return out


def set_cache_capacity(which: str, n: int) -> None:
    """Bound a process-wide cache to ``n`` entries, evicting the least recently used.

    Parameters
    ----------
    which : {"tiling", "operator"}
        The cache.
    n : int
        The new capacity (entries), ``n >= 0``; the library may reject values it cannot use.

    Raises
    ------
    ValueError
        For an unknown cache or a capacity the library refuses.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"set_cache_capacity: n should be an int >= 0, got {n!r}")
    handle = _cache_handle(which)
    err = AopError()
    status = library().aop_cache_set_capacity(handle, n, ctypes.byref(err))
    _raise_for(status, err, f"set_cache_capacity({which!r}, {n})")


def clear_caches(which: Optional[str] = None, *, reset_stats: bool = False) -> None:
    """Drop the entries of the tiling and operator caches (or of one of them).

    Parameters
    ----------
    which : {"tiling", "operator"}, optional
        One cache; both when omitted.
    reset_stats : bool
        Also zero the hit/miss/insert/eviction counters (kept by default).
    """
    lib = library()
    for name in _selected(which):
        handle = _cache_handle(name)
        lib.aop_cache_clear(handle)
        if reset_stats:
            lib.aop_cache_reset_stats(handle)


def reset_cache_stats(which: Optional[str] = None) -> None:
    """Zero the counters of the tiling and operator caches (or of one), keeping entries."""
    lib = library()
    for name in _selected(which):
        lib.aop_cache_reset_stats(_cache_handle(name))


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


def _pool_dict(s: AopPoolStats) -> PoolStats:
    return PoolStats(
        name=_text(s.name),
        limit_bytes=s.limit_bytes,
        in_use_bytes=s.in_use_bytes,
        cached_bytes=s.cached_bytes,
        peak_bytes=s.peak_bytes,
        allocations=s.allocations,
        deallocations=s.deallocations,
        reuses=s.reuses,
        acquires=s.acquires,
        live_blocks=s.live_blocks,
    )


def pool_stats() -> List[PoolStats]:
    """Return the counters of every live workspace pool (the default pool first).

    Returns
    -------
    list of dict
        One dict per pool: name, limit_bytes, in_use_bytes, cached_bytes, peak_bytes,
        allocations, deallocations, reuses, acquires, live_blocks.
    """
    lib = library()
    lib.aop_default_pool()
    out: List[PoolStats] = []
    for index in range(lib.aop_pool_registry_size()):
        s = AopPoolStats()
        if lib.aop_pool_registry_stats(index, ctypes.byref(s)):
            out.append(_pool_dict(s))
    return out


def trim_default_pool() -> None:
    """Free every cached (not in use) block of the process-wide CPU workspace pool."""
    lib = library()
    lib.aop_pool_trim(lib.aop_default_pool())


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


def _platform(p: AopPlatform) -> Platform:
    return Platform(
        soc=_text(p.soc),
        family=_text(p.family),
        aiv_cores=p.aiv_cores,
        aic_cores=p.aic_cores,
        ub_bytes=p.ub_bytes,
        l1_bytes=p.l1_bytes,
        l0a_bytes=p.l0a_bytes,
        l0b_bytes=p.l0b_bytes,
        l0c_bytes=p.l0c_bytes,
        is_real_device=bool(p.is_real_device),
    )


def platform_presets() -> List[Platform]:
    """Return every platform preset the library knows (Atlas A2 / A3 parts)."""
    lib = library()
    out: List[Platform] = []
    for index in range(lib.aop_platform_preset_count()):
        p = AopPlatform()
        if lib.aop_platform_preset_at(index, ctypes.byref(p)):
            out.append(_platform(p))
    return out


def platform_preset(name: str) -> Platform:
    """Return the preset named ``name`` (case-insensitive), e.g. ``"Ascend910B4"``.

    Raises
    ------
    ValueError
        For an unknown name; the message lists the known ones.
    """
    if not isinstance(name, str):
        raise TypeError(f"platform_preset: name should be a str, got {type(name).__name__}")
    p, err = AopPlatform(), AopError()
    status = library().aop_platform_preset(name.encode(), ctypes.byref(p), ctypes.byref(err))
    _raise_for(status, err, f"platform_preset({name!r})")
    return _platform(p)


def current_platform() -> Platform:
    """Return the platform ops tile for in this process.

    The real device where CANN found one, else the preset named by ``$ASCEND_OPS_PLATFORM``,
    else Ascend910B2.

    Raises
    ------
    ValueError
        If ``$ASCEND_OPS_PLATFORM`` names no preset.
    """
    p, err = AopPlatform(), AopError()
    status = library().aop_platform_current(ctypes.byref(p), ctypes.byref(err))
    _raise_for(status, err, "current_platform()")
    return _platform(p)


# --- threads (parallel.h) ------------------------------------------------------------------
def num_threads() -> int:
    """Threads of common's CPU worker pool: ASCEND_OPS_NUM_THREADS, :func:`set_num_threads`, or
    one per hardware thread. (A call through torch runs on torch's pool with
    ``torch.get_num_threads()`` threads unless a count was chosen explicitly.)"""
    return int(library().aop_num_threads())


def set_num_threads(n: int) -> None:
    """Choose the CPU kernels' thread count explicitly (common's pool, for every front door,
    torch included); ``n <= 0`` goes back to the default (ASCEND_OPS_NUM_THREADS if set, else
    torch's pool for torch calls and one thread per hardware thread otherwise)."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"set_num_threads: n should be an int but is {type(n).__name__}")
    library().aop_set_num_threads(n)


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
    err = AopError()
    status = library().aop_async_error_check(1 if synchronize else 0, ctypes.byref(err))
    _raise_for(status, err, "check_errors()")
