"""Golden comparison, bfloat16 helpers for NumPy and seeded random cases, shared by every op.

Tolerances live in one table, :data:`TOLERANCES`, keyed by canonical dtype name:

============  ==========  ==========  ======================================================
dtype         atol        rtol        why
============  ==========  ==========  ======================================================
float16       1e-3        1e-3        10-bit significand: half an ulp is ~4.9e-4 relative
bfloat16      1e-2        1e-2        7-bit significand: one ulp at 1.0 is 2**-7 ~ 7.8e-3
float32       1e-5        1e-5        23-bit significand with room for reordered sums
float64       1e-7        1e-7        (rarely an op dtype; for references)
integers      0           0           exact
============  ==========  ==========  ======================================================

Copy and index ops (gather, scatter, cache writes) pass ``exact=True``: floats are then
compared bit for bit, so ``-0.0`` vs ``0.0`` and NaN payloads count as differences.

NumPy has no bfloat16. Bfloat16 data is a ``uint16`` array of bit patterns (the upper half
of a float32): :func:`to_bf16_bits` rounds float32 to nearest, ties to even, and
:func:`from_bf16_bits` widens back exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from .dtypes import canonical, dtype_names

__all__ = [
    "SEED",
    "Tolerance",
    "TOLERANCES",
    "EXACT",
    "tolerance",
    "assert_close",
    "to_bf16_bits",
    "from_bf16_bits",
    "bf16_round",
    "make_rng",
    "random_array",
    "strided_rows",
    "ms_synchronize",
    "dtype_names",
]

#: Default seed of :func:`make_rng`.
SEED = 0


@dataclass(frozen=True)
class Tolerance:
    """Allowed error ``|actual - expected| <= atol + rtol * |expected|``."""

    atol: float
    rtol: float

    @property
    def exact(self) -> bool:
        """True when no difference is allowed."""
        return self.atol == 0 and self.rtol == 0


#: No difference allowed.
EXACT = Tolerance(0.0, 0.0)

#: The one table of tolerances, by canonical dtype name (see the module docstring).
TOLERANCES: Dict[str, Tolerance] = {
    "float16": Tolerance(1e-3, 1e-3),
    "bfloat16": Tolerance(1e-2, 1e-2),
    "float32": Tolerance(1e-5, 1e-5),
    "float64": Tolerance(1e-7, 1e-7),
    "int8": EXACT,
    "int16": EXACT,
    "int32": EXACT,
    "int64": EXACT,
    "uint8": EXACT,
    "bool": EXACT,
}

_FLOATS = ("float16", "bfloat16", "float32", "float64")


def tolerance(dtype: Any, *, exact: bool = False) -> Tolerance:
    """Return the tolerance for ``dtype`` (:data:`EXACT` when ``exact``).

    Parameters
    ----------
    dtype : str, numpy dtype, torch or mindspore dtype
    exact : bool
        For copy / index ops: no difference allowed whatever the dtype.
    """
    name = canonical(dtype)
    return EXACT if exact else TOLERANCES[name]


# --- bfloat16 ------------------------------------------------------------------------------
def to_bf16_bits(x: Any) -> np.ndarray:
    """Round to bfloat16, nearest with ties to even, and return the bit patterns.

    Parameters
    ----------
    x : array_like
        Float values; converted to float32 first (float64 input is thus rounded twice).

    Returns
    -------
    numpy.ndarray of uint16
        Same shape. NaN stays NaN (sign and upper payload kept, quiet bit set); values
        beyond the bfloat16 range round to +-inf.
    """
    f = np.asarray(x, dtype=np.float32)
    flat = f.reshape(-1)  # 1-D: NumPy 1.x would treat 0-d arrays as scalars and promote
    bits = flat.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    quiet_nan = (bits >> 16) | 0x0040
    out = np.where(np.isnan(flat), quiet_nan, rounded)
    return out.astype(np.uint16).reshape(f.shape)


def from_bf16_bits(bits: Any) -> np.ndarray:
    """Widen bfloat16 bit patterns to float32 (exact).

    Parameters
    ----------
    bits : array_like of uint16
        Bit patterns, e.g. from :func:`to_bf16_bits` or ``tensor.view(torch.int16)``.

    Returns
    -------
    numpy.ndarray of float32
    """
    b = np.asarray(bits)
    if b.dtype != np.uint16:
        if b.dtype.kind not in "iu" or (b.size and (b.min() < -0x8000 or b.max() > 0xFFFF)):
            raise TypeError(f"from_bf16_bits: expects uint16 bit patterns, got {b.dtype} values")
        b = b.astype(np.int64).astype(np.uint16)  # int16 views keep their bits
    wide = b.reshape(-1).astype(np.uint32) << 16
    return wide.view(np.float32).reshape(b.shape)


def bf16_round(x: Any) -> np.ndarray:
    """Return ``x`` rounded to the nearest bfloat16 value, as float32."""
    return from_bf16_bits(to_bf16_bits(x))


# --- golden comparison ---------------------------------------------------------------------
def _as_values(a: np.ndarray, name: str) -> np.ndarray:
    if name == "bfloat16":
        if a.dtype == np.uint16:
            return from_bf16_bits(a).astype(np.float64)
        return a.astype(np.float64)
    if name in _FLOATS:
        return a.astype(np.float64)
    return a


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"u{a.dtype.itemsize}")) if a.dtype.kind == "f" else a


def _index(flat: int, shape: Tuple[int, ...]) -> Tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def _show(raw: np.ndarray, values: np.ndarray, idx: Tuple[int, ...], name: str) -> str:
    value = values[idx].item()
    if name == "bfloat16" and raw.dtype == np.uint16:
        return f"{value!r} (bits 0x{int(raw[idx]):04x})"
    if raw.dtype.kind == "f":
        return f"{value!r} (bits 0x{int(_bits(raw)[idx]):0{raw.dtype.itemsize * 2}x})"
    return repr(value)


def assert_close(
    actual: Any,
    expected: Any,
    dtype: Any = None,
    *,
    exact: bool = False,
    tol: Optional[Tolerance] = None,
    name: str = "output",
) -> None:
    """Compare an op's output with its golden reference.

    Parameters
    ----------
    actual, expected : array_like
        Same shape. Bfloat16 data as uint16 bit patterns (pass ``dtype="bfloat16"``) or as
        float values. ``expected`` may be computed in a wider float type.
    dtype : optional
        The op's dtype, which picks the tolerance; ``actual.dtype`` when omitted.
    exact : bool
        Copy / index ops: compare bit for bit (floats) or exactly (integers).
    tol : Tolerance, optional
        Overrides the table (say why at the call site).
    name : str
        What is compared, for the message (``"key_cache"``).

    Raises
    ------
    AssertionError
        On a shape mismatch or any element outside tolerance. The message gives the dtype
        and tolerance, the mismatch count, the first mismatching index with both values and
        the largest difference.
    """
    a, e = np.asarray(actual), np.asarray(expected)
    kind = canonical(dtype if dtype is not None else a.dtype)
    if a.shape != e.shape:
        raise AssertionError(f"{name}: shape {a.shape} differs from expected {e.shape}")
    tol = tol if tol is not None else tolerance(kind, exact=exact)
    bitwise = tol.exact and kind in _FLOATS and a.dtype == e.dtype
    av, ev = _as_values(a, kind), _as_values(e, kind)
    if bitwise:
        bad = _bits(a) != _bits(e)
    elif kind in _FLOATS:
        bad = ~np.isclose(av, ev, rtol=tol.rtol, atol=tol.atol, equal_nan=True)
    else:
        bad = av != ev
    count = int(np.count_nonzero(bad))
    if count == 0:
        return
    first = _index(int(np.flatnonzero(bad)[0]), a.shape)
    rule = "bit for bit" if bitwise else "exact" if tol.exact else f"atol={tol.atol:g}, rtol={tol.rtol:g}"
    header = (f"{name} ({kind}, {rule}"
              + f"): {count} of {a.size} elements differ")
    lines = [header,
             f"  first at index {first}: actual {_show(a, av, first, kind)}, "
             f"expected {_show(e, ev, first, kind)}"]
    if kind in _FLOATS and not bitwise:
        with np.errstate(invalid="ignore"):
            diff = np.abs(av - ev)
        allowed = tol.atol + tol.rtol * abs(float(ev[first]))
        lines[-1] += f", |diff| {float(diff[first]):.6g} > allowed {allowed:.6g}"
        finite = np.where(bad & np.isfinite(diff), diff, -1.0)
        if finite.max() >= 0:
            worst = _index(int(np.argmax(finite)), a.shape)
            lines.append(f"  largest |diff| {float(diff[worst]):.6g} at index {worst}: "
                         f"actual {av[worst].item()!r}, expected {ev[worst].item()!r}")
    raise AssertionError("\n".join(lines))


# --- random cases --------------------------------------------------------------------------
def make_rng(seed: int = SEED) -> np.random.Generator:
    """Return a seeded ``numpy.random.Generator`` (every test states its seed)."""
    return np.random.default_rng(seed)


def random_array(
    shape: Union[int, Sequence[int]],
    dtype: Any,
    rng: np.random.Generator,
    *,
    low: Optional[float] = None,
    high: Optional[float] = None,
) -> np.ndarray:
    """Return a random C-contiguous array.

    Parameters
    ----------
    shape : int or sequence of int
    dtype : float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8 or bool
        Bfloat16 comes back as uint16 bit patterns.
    rng : numpy.random.Generator
    low, high : optional
        Floats: uniform in ``[low, high)`` instead of the standard normal distribution.
        Integers: ``[low, high)`` instead of the dtype's whole range.

    Returns
    -------
    numpy.ndarray
    """
    kind = canonical(dtype)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if kind in _FLOATS:
        if (low is None) != (high is None):
            raise ValueError("random_array: give both low and high, or neither")
        if low is None:
            values = rng.standard_normal(shape, dtype=np.float64)
        else:
            values = rng.uniform(low, high, shape)
        if kind == "bfloat16":
            return to_bf16_bits(values.astype(np.float32))
        return values.astype(dtype_names[kind].numpy)
    np_dtype = np.dtype(dtype_names[kind].numpy)
    if kind == "bool":
        return rng.integers(0, 2, size=shape, dtype=np.int8).astype(np.bool_)
    info = np.iinfo(np_dtype)
    lo = info.min if low is None else int(low)
    hi = info.max + 1 if high is None else int(high)
    return rng.integers(lo, hi, size=shape, dtype=np_dtype)


def strided_rows(array: Any, pad: int, fill: Any = None) -> np.ndarray:
    """Return a copy of ``array`` as a view whose rows are ``pad`` elements apart.

    The last axis keeps its length; every other stride grows, so the result is not
    contiguous and its row stride is ``(row + pad) * itemsize``. The padding holds ``fill``
    so a kernel that reads it produces visibly wrong output.

    Parameters
    ----------
    array : array_like
        At least 2-D.
    pad : int
        Extra elements after each row, ``pad >= 1``.
    fill : optional
        Padding value; NaN for floats, the dtype's maximum for integers (0xFFFF, a NaN, for
        bfloat16 bit patterns), True for bool.

    Returns
    -------
    numpy.ndarray
        A view into a larger buffer, equal to ``array``.
    """
    a = np.asarray(array)
    if a.ndim < 2:
        raise ValueError(f"strided_rows: array should be at least 2-D, got shape {a.shape}")
    if not isinstance(pad, (int, np.integer)) or pad < 1:
        raise ValueError(f"strided_rows: pad should be an int >= 1, got {pad!r}")
    if fill is None:
        if a.dtype.kind == "f":
            fill = np.nan
        elif a.dtype.kind == "b":
            fill = True
        else:
            fill = np.iinfo(a.dtype).max
    row = a.shape[-1]
    buffer = np.full(a.shape[:-1] + (row + int(pad),), fill, dtype=a.dtype)
    view = buffer[..., :row]
    view[...] = a
    return view


def ms_synchronize() -> None:
    """A MindSpore PyNative host synchronisation: read back the result of a fresh op.

    MindSpore 2.10 raises an exception of queued work (an op's data check in its device task)
    here, once, with the op's class and message; the next op call and, on CPU,
    ``ms.runtime.synchronize()`` do not. Tests of the asynchronous error contract call this
    where a user would read a result.
    """
    import mindspore as ms  # only where mindspore is installed

    (ms.Tensor(0, ms.int32) + 0).asnumpy()
