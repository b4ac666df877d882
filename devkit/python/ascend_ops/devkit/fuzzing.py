"""The oracle and settings shared by every op's fuzzer.

An op's fuzzer draws a valid case (shapes, dtypes, strides, front door), then plants zero or
more faults in it (a wrong dtype, rank or shape, an out-of-range index, an overflow, ...),
each with the documented exception it must raise. :func:`check_call` runs the op once and
holds it to the contract:

- no fault planted: the call returns and the op's own check (golden comparison) passes;
- faults planted: the call raises one of their documented exceptions, with a message that
  starts with ``"<op>:"``, and every byte of every buffer is what it was before.

Either way the call must not raise anything else, and the buffers the fuzzer lists (whole
allocations, with the guard bytes around strided views) may change only where the op's
check expects. The number of cases per fuzz test is ``AOP_FUZZ_EXAMPLES`` (``./dev fuzz``
sets 10,000) or the quick profile of ``./dev test``; outcomes are counted per op for
:mod:`ascend_ops.devkit.reliability`.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterable, List, Optional, Sequence, Tuple, Type

import numpy as np
from hypothesis import HealthCheck, settings

from ascend_ops.common.loader import build_info

from . import reliability

__all__ = ["EXAMPLES_ENV", "QUICK_EXAMPLES", "GUARD_BYTES", "Fault", "examples", "fuzz_settings", "guarded",
           "owners", "to_torch", "raw_bytes", "front_doors", "expected_bytes", "assert_bytes", "check_call"]

#: Cases per fuzz test; unset = :data:`QUICK_EXAMPLES`.
EXAMPLES_ENV = "AOP_FUZZ_EXAMPLES"
#: The quick profile run by ``./dev test``.
QUICK_EXAMPLES = 150
#: Random bytes before and after every array :func:`guarded` makes: a write outside the
#: tensor changes them.
GUARD_BYTES = 64


@dataclass(frozen=True)
class Fault:
    """A planted fault: what was broken and the documented exception it must raise."""

    what: str
    error: Type[Exception]


def front_doors(package: str) -> List[str]:
    """The front doors ``package`` (e.g. ``"ascend_ops.my_op"``) was built with:
    ``"numpy-cpu"`` always, ``"numpy-emu"`` with the emulator backend, ``"torch-cpu"`` with
    the torch adapter (and torch installed)."""
    doors = ["numpy-cpu"]
    info = build_info(package)
    if info is not None and info.BACKENDS.get("emu"):
        doors.append("numpy-emu")
    if info is not None and info.FRAMEWORKS.get("torch") and importlib.util.find_spec("torch") is not None:
        doors.append("torch-cpu")
    return doors


def examples() -> int:
    """Cases per fuzz test: ``$AOP_FUZZ_EXAMPLES`` or :data:`QUICK_EXAMPLES`."""
    text = os.environ.get(EXAMPLES_ENV, "")
    if not text:
        return QUICK_EXAMPLES
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{EXAMPLES_ENV} should be a positive integer, got {text!r}")
    return int(text)


def fuzz_settings() -> settings:
    """Hypothesis settings of a fuzz test: :func:`examples` cases, no deadline (sanitizer
    builds are slow), no example database (a run is reproduced from the printed example)."""
    return settings(
        max_examples=examples(),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )


def guarded(shape: Sequence[int], dtype: Any, rng: np.random.Generator, *, row_pad: int = 0,
            values: Optional[np.ndarray] = None) -> np.ndarray:
    """An array of ``shape`` inside a larger allocation of random bytes.

    Parameters
    ----------
    shape : sequence of int
        ``[rows, ...]``.
    dtype : numpy dtype
    rng : numpy.random.Generator
    row_pad : int
        Extra elements between rows (a row-strided view, like a slice of a fused qkv
        tensor); 0 gives a C-contiguous array.
    values : numpy.ndarray, optional
        Copied into the array; random bit patterns (NaN, inf and -0.0 included) otherwise.

    Returns
    -------
    numpy.ndarray
        A view; its allocation (:func:`owners`) holds :data:`GUARD_BYTES` random bytes on
        each side and random bytes in the row padding.
    """
    dtype = np.dtype(dtype)
    shape = tuple(int(n) for n in shape)
    rows = shape[0] if shape else 1
    row = int(np.prod(shape[1:], dtype=np.int64)) if shape else 1
    guard = -(-GUARD_BYTES // dtype.itemsize)
    span = rows * (row + row_pad)
    store = rng.integers(0, 256, size=(span + 2 * guard) * dtype.itemsize, dtype=np.uint8).view(dtype)
    body = store[guard:guard + span].reshape(rows, row + row_pad)
    offset = row_pad // 2
    view = body[:, offset:offset + row].reshape(shape)
    if values is not None:
        view[...] = values
    return view


def owners(*arrays: Any) -> list:
    """The distinct allocations (root NumPy arrays) behind ``arrays`` (arrays or None)."""
    found: dict = {}
    for a in arrays:
        if a is None or not isinstance(a, np.ndarray):
            continue
        while isinstance(a.base, np.ndarray):
            a = a.base
        found.setdefault(id(a), a)
    return list(found.values())


def to_torch(a: Any, *, bfloat16: bool = False) -> Any:
    """A CPU torch tensor sharing ``a``'s memory (uint16 as bfloat16 bits when ``bfloat16``);
    anything else unchanged."""
    if not isinstance(a, np.ndarray):
        return a
    import torch

    t = torch.from_numpy(a)
    return t.view(torch.bfloat16) if bfloat16 and a.dtype == np.uint16 else t


def raw_bytes(x: Any) -> bytes:
    """The bytes of a NumPy array or a CPU torch tensor, whatever its dtype (bfloat16 too)."""
    if isinstance(x, np.ndarray):
        return np.ascontiguousarray(x).tobytes()
    if type(x).__module__.startswith("torch"):
        import torch

        flat = x.detach().cpu().contiguous().reshape(-1)
        return flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""
    raise TypeError(f"raw_bytes: expects a numpy.ndarray or a torch.Tensor, got {type(x).__qualname__}")


def expected_bytes(roots: Sequence[np.ndarray], writes: Iterable[Tuple[np.ndarray, np.ndarray]] = ()) -> list:
    """What ``roots`` (from :func:`owners`) must hold after a call that writes ``values``
    into each C-contiguous ``view`` of ``writes`` and nothing else.

    Returns one bytearray per root; patch it further for results the contract leaves open.
    """
    out = [bytearray(raw_bytes(root)) for root in roots]
    for view, values in writes:
        index, start = locate(roots, view)
        values = np.ascontiguousarray(values, dtype=view.dtype)
        assert values.shape == view.shape, f"expected_bytes: values {values.shape} for a view {view.shape}"
        out[index][start:start + view.nbytes] = values.tobytes()
    return out


def locate(roots: Sequence[np.ndarray], view: np.ndarray) -> Tuple[int, int]:
    """(index of the root holding ``view``, byte offset of ``view`` in it)."""
    address = view.__array_interface__["data"][0]
    for index, root in enumerate(roots):
        start = address - root.__array_interface__["data"][0]
        if 0 <= start and start + view.nbytes <= root.nbytes:
            return index, start
    raise ValueError("locate: the view is in none of the roots")


def assert_bytes(roots: Sequence[np.ndarray], expected: Sequence[bytes], what: str = "") -> None:
    """Every root holds exactly its expected bytes; the error names the first differing byte."""
    for index, (root, want) in enumerate(zip(roots, expected)):
        got = raw_bytes(root)
        if got != bytes(want):
            first = next(i for i, (a, b) in enumerate(zip(got, want)) if a != b)
            raise AssertionError(f"{what}buffer {index} ({root.dtype}, {root.nbytes} bytes) differs from the "
                                 f"expected bytes first at byte {first}")


def check_call(
    op: str,
    call: Callable[[], Any],
    *,
    buffers: Sequence[Any],
    faults: Iterable[Fault] = (),
    check: Optional[Callable[[Any], None]] = None,
    door: str = "",
    package: str = "",
) -> Tuple[str, Any]:
    """Run ``call()`` once and hold the outcome to the op's contract (see the module doc).

    Parameters
    ----------
    op : str
        The op's name: messages must start with ``"<op>:"``; figures are recorded under it.
    call : callable
        Calls the op on the drawn case.
    buffers : sequence of arrays / tensors
        Every allocation the call may read or write (whole, not the views passed to the op).
    faults : iterable of Fault
        The faults planted; empty for a valid case.
    check : callable, optional
        For a valid case: called with the call's result; compares outputs and buffers with
        the golden reference and raises AssertionError on a difference.
    door : str
        The front door (``"numpy-cpu"``, ``"torch-cpu"``, ...), for the error messages.
    package : str
        The op's package (``"my_op_pkg"``) when its name differs from the function's:
        the figures are recorded under it.

    Returns
    -------
    ("accepted", result) or ("rejected", exception)
    """
    faults = tuple(faults)
    before = [raw_bytes(b) for b in buffers]
    where = f"{op} via {door}" if door else op
    if not faults:
        try:
            result = call()
        except Exception as exc:
            raise AssertionError(f"{where}: no fault planted, yet the call raised "
                                 f"{type(exc).__name__}: {exc}") from exc
        if check is not None:
            check(result)
        reliability.record("fuzz", package or op, cases=1, accepted=1)
        return "accepted", result
    expected = tuple({f.error for f in faults})
    planted = ", ".join(f"{f.what} ({f.error.__name__})" for f in faults)
    try:
        result = call()
    except expected as exc:
        message = str(exc)
        if not message.startswith(f"{op}:"):
            raise AssertionError(f"{where}: the message does not start with '{op}:': {message!r}") from exc
        for index, (buffer, old) in enumerate(zip(buffers, before)):
            if raw_bytes(buffer) != old:
                raise AssertionError(f"{where}: raised {type(exc).__name__} for {planted} but changed "
                                     f"buffer {index} ({message})") from exc
        reliability.record("fuzz", package or op, cases=1, rejected=1)
        return "rejected", exc
    except Exception as exc:
        raise AssertionError(f"{where}: planted {planted}, expected "
                             f"{' or '.join(e.__name__ for e in expected)}, got "
                             f"{type(exc).__name__}: {exc}") from exc
    raise AssertionError(f"{where}: planted {planted} but the call returned {result!r}")
