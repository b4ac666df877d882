"""The simulated Ascend runtime (libascend_sim, built with ``AOP_WITH_NPU_SIM=ON`` by ./dev and
CI, never in a release package), from Python: device memory, streams, capture and replay, and
the counters a test or benchmark reads around an op's NPU call.

Device memory is host memory owned by the runtime. :class:`DeviceArray` wraps it in a NumPy
array (``.array``) that an op's ``_core.run_npu_sim`` takes as a device tensor; the host never
reads it directly (``.numpy()`` copies it out, after synchronising the stream the caller says)::

    from ascend_ops.devkit import ascend_sim as sim
    s = sim.Stream()
    x = sim.to_device(np.arange(8, dtype=np.int32))
    before = sim.counters()
    _core.run_npu_sim(..., stream=s.handle)       # queued, not run
    per_call = sim.counters() - before            # synchronizations, copies, allocations, ...
    s.synchronize(); x.numpy()

Bound with ctypes by hand (a dozen functions of a test-only library): a pybind11 module would give
this pure-Python package a native build of its own.
"""

from __future__ import annotations

import ctypes
import dataclasses
from contextlib import contextmanager
from typing import Iterator, Optional

import numpy as np

from ascend_ops.common import lib_dir

__all__ = ["available", "Counters", "counters", "reset_counters", "Stream", "DeviceArray", "to_device",
           "empty", "Graph", "capture", "synchronize_device", "last_fault", "SimError", "POISON"]

POISON = 0xDB  # the byte freed device memory is filled with
LIB_NAME = "libascend_sim.so"
_FIELDS = ("synchronizations", "h2d_copies", "d2h_copies", "d2d_copies", "allocations", "frees", "launches",
           "memsets", "pageable_refused", "capture_violations")
_H2D, _D2H = 1, 2  # aclrtMemcpyKind


class SimError(RuntimeError):
    """A simulated ACL call returned an error status (``.status``)."""

    def __init__(self, what: str, status: int) -> None:
        fault = last_fault() if status == 507015 else ""
        super().__init__(f"{what} failed with aclError {status}" + (f": {fault}" if fault else ""))
        self.status = status


class _CCounters(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in _FIELDS]


@dataclasses.dataclass(frozen=True)
class Counters:
    """What the runtime was asked to do (process-wide). ``b - a`` is what happened in between."""

    synchronizations: int = 0
    h2d_copies: int = 0
    d2h_copies: int = 0
    d2d_copies: int = 0
    allocations: int = 0
    frees: int = 0
    launches: int = 0
    memsets: int = 0
    pageable_refused: int = 0
    capture_violations: int = 0

    def __sub__(self, other: "Counters") -> "Counters":
        return Counters(**{f: getattr(self, f) - getattr(other, f) for f in _FIELDS})

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


_lib: Optional[ctypes.CDLL] = None


def _library() -> ctypes.CDLL:
    global _lib
    if _lib is None:
        path = lib_dir() / LIB_NAME
        if not path.is_file():
            raise FileNotFoundError(f"{path}: ascend-op-common was built without AOP_WITH_NPU_SIM=ON")
        lib = ctypes.CDLL(str(path))
        vp, sz, i32 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int32
        for name, args in {
            "aclrtMalloc": [ctypes.POINTER(vp), sz, ctypes.c_int], "aclrtFree": [vp],
            "aclrtMallocHost": [ctypes.POINTER(vp), sz], "aclrtFreeHost": [vp],
            "aclrtMemcpy": [vp, sz, vp, sz, ctypes.c_int],
            "aclrtMemcpyAsync": [vp, sz, vp, sz, ctypes.c_int, vp],
            "aclrtCreateStream": [ctypes.POINTER(vp)], "aclrtDestroyStream": [vp],
            "aclrtSynchronizeStream": [vp], "aclrtSynchronizeDevice": [],
            "aclmdlRICaptureBegin": [vp, ctypes.c_int], "aclmdlRICaptureEnd": [vp, ctypes.POINTER(vp)],
            "aclmdlRIExecuteAsync": [vp, vp], "aclmdlRIDestroy": [vp],
        }.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = args, i32
        lib.ascend_sim_get_counters.argtypes, lib.ascend_sim_get_counters.restype = [ctypes.POINTER(_CCounters)], None
        lib.ascend_sim_reset_counters.argtypes, lib.ascend_sim_reset_counters.restype = [], None
        lib.ascend_sim_last_fault.argtypes, lib.ascend_sim_last_fault.restype = [], ctypes.c_char_p
        _lib = lib
    return _lib


def _check(status: int, what: str) -> None:
    if status != 0:
        raise SimError(what, status)


def available() -> bool:
    """Whether libascend_sim is installed (common built with ``AOP_WITH_NPU_SIM=ON``)."""
    try:
        _library()
    except (FileNotFoundError, OSError):
        return False
    return True


def counters() -> Counters:
    c = _CCounters()
    _library().ascend_sim_get_counters(ctypes.byref(c))
    return Counters(**{f: getattr(c, f) for f in _FIELDS})


def reset_counters() -> None:
    _library().ascend_sim_reset_counters()


def last_fault() -> str:
    """The message of the last device fault a synchronisation reported."""
    return (_library().ascend_sim_last_fault() or b"").decode()


def synchronize_device() -> None:
    _check(_library().aclrtSynchronizeDevice(), "aclrtSynchronizeDevice")


class Stream:
    """A simulated aclrtStream: an in-order queue drained by its own thread."""

    def __init__(self) -> None:
        handle = ctypes.c_void_p()
        _check(_library().aclrtCreateStream(ctypes.byref(handle)), "aclrtCreateStream")
        self.handle: int = handle.value

    def synchronize(self) -> None:
        _check(_library().aclrtSynchronizeStream(self.handle), "aclrtSynchronizeStream")

    def destroy(self) -> None:
        if self.handle:
            _check(_library().aclrtDestroyStream(self.handle), "aclrtDestroyStream")
            self.handle = 0


class DeviceArray:
    """Simulated device memory (one aclrtMalloc) seen as a NumPy array of ``shape``, ``dtype``
    and byte ``strides`` (C order when None): ``.array``, to hand to ``run_npu_sim``; never
    read it from the host (``.numpy()`` copies it out)."""

    def __init__(self, shape, dtype, strides=None) -> None:
        self.dtype = np.dtype(dtype)
        self.shape = tuple(int(d) for d in shape)
        self.strides = tuple(strides) if strides else np.empty(self.shape, self.dtype).strides
        span = 0
        if all(d > 0 for d in self.shape):
            span = sum((d - 1) * st for d, st in zip(self.shape, self.strides)) + self.dtype.itemsize
        self.nbytes = span
        ptr = ctypes.c_void_p()
        _check(_library().aclrtMalloc(ctypes.byref(ptr), max(span, 1), 0), "aclrtMalloc")
        self.ptr: int = ptr.value
        self._raw = (ctypes.c_uint8 * max(span, 1)).from_address(self.ptr)
        self.array = np.ndarray(self.shape, self.dtype, buffer=self._raw, strides=self.strides)

    def copy_from(self, host: np.ndarray) -> None:
        """Synchronous H2D copy of ``host``'s elements (aclrtMemcpy: pageable host memory is
        fine for a synchronous copy, and it counts); the bytes between strided rows are
        copied as the host holds them."""
        staged = np.zeros(max(self.nbytes, 1), np.uint8)
        view = np.ndarray(self.shape, self.dtype, buffer=staged, strides=self.strides)
        view[...] = host
        if self.nbytes:
            _check(_library().aclrtMemcpy(self.ptr, self.nbytes, staged.ctypes.data, self.nbytes, _H2D),
                   "aclrtMemcpy")

    def numpy(self) -> np.ndarray:
        """A contiguous host copy (synchronous D2H aclrtMemcpy). Synchronise the writer first."""
        staged = np.zeros(max(self.nbytes, 1), np.uint8)
        if self.nbytes:
            _check(_library().aclrtMemcpy(staged.ctypes.data, self.nbytes, self.ptr, self.nbytes, _D2H),
                   "aclrtMemcpy")
        return np.array(np.ndarray(self.shape, self.dtype, buffer=staged, strides=self.strides))

    def free(self) -> None:
        """aclrtFree: the memory is poisoned (POISON bytes) and never reused while quarantined."""
        if self.ptr:
            self.array = None
            self._raw = None
            _check(_library().aclrtFree(self.ptr), "aclrtFree")
            self.ptr = 0


def empty(shape, dtype) -> DeviceArray:
    return DeviceArray(shape, dtype)


def to_device(host: np.ndarray) -> DeviceArray:
    """A device copy of ``host`` with the same strides (a strided view stays strided)."""
    strides = host.strides if all(st > 0 for st in host.strides) else None
    d = DeviceArray(host.shape, host.dtype, strides)
    d.copy_from(host)
    return d


class Graph:
    """A captured stream (aclmdlRI); ``replay(stream)`` queues its work again (aclmdlRIExecuteAsync)."""

    def __init__(self, handle: int) -> None:
        self.handle = handle

    def replay(self, stream: Stream) -> None:
        _check(_library().aclmdlRIExecuteAsync(self.handle, stream.handle), "aclmdlRIExecuteAsync")

    def destroy(self) -> None:
        if self.handle:
            _check(_library().aclmdlRIDestroy(self.handle), "aclmdlRIDestroy")
            self.handle = 0


@contextmanager
def capture(stream: Stream) -> Iterator[list]:
    """Captures what is queued on ``stream`` inside the block; yields a list that holds the
    :class:`Graph` once the block ends. A synchronisation or allocation inside fails."""
    lib = _library()
    _check(lib.aclmdlRICaptureBegin(stream.handle, 0), "aclmdlRICaptureBegin")
    out: list = []
    try:
        yield out
    finally:
        handle = ctypes.c_void_p()
        _check(lib.aclmdlRICaptureEnd(stream.handle, ctypes.byref(handle)), "aclmdlRICaptureEnd")
        out.append(Graph(handle.value))
