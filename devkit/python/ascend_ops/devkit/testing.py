"""Seeded random cases, bfloat16 helpers for NumPy and a MindSpore synchronisation, shared by every
op's tests. Golden comparisons use ``numpy.testing.assert_array_equal`` (exact: copy and index ops)
or ``numpy.testing.assert_allclose`` / ``torch.testing.assert_close`` with the tolerance each test
documents.

NumPy has no bfloat16 of its own: the front doors take ``ml_dtypes.bfloat16`` arrays
(:func:`to_bf16`), or ``uint16`` bit patterns with ``dtype="bfloat16"`` (:func:`to_bf16_bits`,
:func:`from_bf16_bits`); both conversions are ml_dtypes' (round to nearest, ties to even).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import ml_dtypes
import numpy as np

from ascend_ops.common.dtypes import canonical, dtype_names

__all__ = [
    "SEED",
    "to_bf16",
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

_FLOATS = ("float16", "bfloat16", "float32", "float64")


# --- bfloat16 (ml_dtypes) ------------------------------------------------------------------
def to_bf16(x: Any) -> np.ndarray:
    """Round to bfloat16 (nearest, ties to even) as an ``ml_dtypes.bfloat16`` array, what the NumPy
    front doors take; float64 input is rounded once, not through float32."""
    with np.errstate(invalid="ignore"):
        return np.asarray(x).astype(ml_dtypes.bfloat16)


def to_bf16_bits(x: Any) -> np.ndarray:
    """Round to bfloat16, nearest with ties to even, and return the ``uint16`` bit patterns (the
    front doors' ``dtype="bfloat16"`` convention). ``x`` is converted to float32 first. NaN stays
    NaN (sign kept); values beyond the bfloat16 range round to +-inf."""
    with np.errstate(invalid="ignore"):  # NaN converts to NaN: nothing to warn about
        return np.asarray(x, dtype=np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)


def from_bf16_bits(bits: Any) -> np.ndarray:
    """Widen bfloat16 bit patterns (``uint16``, or an ``int16`` view such as
    ``tensor.view(torch.int16)``) to float32, exactly."""
    b = np.asarray(bits)
    if b.dtype != np.uint16:
        if b.dtype.kind not in "iu" or (b.size and (b.min() < -0x8000 or b.max() > 0xFFFF)):
            raise TypeError(f"from_bf16_bits: expects uint16 bit patterns, got {b.dtype} values")
        b = b.astype(np.int64).astype(np.uint16)  # int16 views keep their bits
    return b.astype(np.uint16).view(ml_dtypes.bfloat16).astype(np.float32)  # a copy: any strides


def bf16_round(x: Any) -> np.ndarray:
    """Return ``x`` rounded to the nearest bfloat16 value, as float32."""
    return from_bf16_bits(to_bf16_bits(x))


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
