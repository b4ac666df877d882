"""Element-type names across NumPy, PyTorch, MindSpore and the C library, in one table.

No framework is imported to build or read the table; :func:`torch_dtype` and
:func:`mindspore_dtype` import their framework only when called. NumPy has no bfloat16 of its
own: the NumPy front doors take ``ml_dtypes.bfloat16`` arrays (``canonical`` names their dtype
``"bfloat16"``), or ``uint16`` bit patterns with ``dtype="bfloat16"``, the holder the table's
``numpy`` column names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict

__all__ = ["DtypeNames", "dtype_names", "canonical", "numpy_dtype", "torch_dtype", "mindspore_dtype"]


@dataclass(frozen=True)
class DtypeNames:
    """The names of one element type.

    Attributes
    ----------
    numpy : str
        NumPy dtype name holding the data (``"uint16"`` for bfloat16 bit patterns).
    torch : str
        Attribute of the ``torch`` module (``torch.<name>``).
    mindspore : str
        Attribute of the ``mindspore`` module (``mindspore.<name>``).
    aop : int
        The ``aop_dtype`` value in ``include/ascend_ops/dtype.h``.
    itemsize : int
        Bytes per element.
    """

    numpy: str
    torch: str
    mindspore: str
    aop: int
    itemsize: int


#: canonical name -> names in every library. Canonical names are those of ``aop_dtype_name``.
dtype_names: Dict[str, DtypeNames] = {
    "float16": DtypeNames("float16", "float16", "float16", 0, 2),
    "bfloat16": DtypeNames("uint16", "bfloat16", "bfloat16", 1, 2),
    "float32": DtypeNames("float32", "float32", "float32", 2, 4),
    "int8": DtypeNames("int8", "int8", "int8", 3, 1),
    "int32": DtypeNames("int32", "int32", "int32", 4, 4),
    "int64": DtypeNames("int64", "int64", "int64", 5, 8),
    "uint8": DtypeNames("uint8", "uint8", "uint8", 6, 1),
    "bool": DtypeNames("bool", "bool", "bool_", 7, 1),
    "int16": DtypeNames("int16", "int16", "int16", 8, 2),
    "float64": DtypeNames("float64", "float64", "float64", 9, 8),
}

_ALIASES = {
    "half": "float16",
    "fp16": "float16",
    "bf16": "bfloat16",
    "float": "float32",
    "fp32": "float32",
    "double": "float64",
    "bool_": "bool",
}


def canonical(dtype: Any) -> str:
    """Return the canonical name of a dtype given in any library's spelling.

    Parameters
    ----------
    dtype : str, numpy dtype, torch.dtype or mindspore type
        E.g. ``"float16"``, ``np.float16``, ``torch.bfloat16`` (``"torch.bfloat16"``),
        ``mindspore.float16`` (whose str is ``"Float16"``).

    Returns
    -------
    str
        A key of :data:`dtype_names`.

    Raises
    ------
    TypeError
        For a dtype the table does not know.

    Notes
    -----
    NumPy ``uint16`` maps to ``"uint16"``-held bfloat16 only when spelled ``"bfloat16"``: a
    bare ``np.uint16`` is not accepted, since it is ambiguous.
    """
    if isinstance(dtype, str):
        text = dtype
    else:
        module = type(dtype).__module__ or ""
        if module.startswith("torch") or module.startswith("mindspore"):
            text = repr(dtype)  # "torch.float16", "mindspore.float16"
        else:
            import numpy as np

            try:
                text = np.dtype(dtype).name
            except TypeError:
                text = str(dtype)
    key = text.strip().rpartition(".")[2].lower()  # "torch.float16" -> "float16"
    key = _ALIASES.get(key, key)
    if key not in dtype_names:
        raise TypeError(f"unknown dtype {dtype!r}; known: {sorted(dtype_names)}")
    return key


def numpy_dtype(dtype: Any):
    """Return the NumPy dtype that holds ``dtype`` (``uint16`` for bfloat16)."""
    import numpy as np

    return np.dtype(dtype_names[canonical(dtype)].numpy)


def torch_dtype(dtype: Any):
    """Return the ``torch.dtype`` for ``dtype`` (imports torch)."""
    from .frameworks import import_framework

    return getattr(import_framework("torch"), dtype_names[canonical(dtype)].torch)


def mindspore_dtype(dtype: Any):
    """Return the MindSpore type for ``dtype`` (imports mindspore)."""
    from .frameworks import import_framework

    return getattr(import_framework("mindspore"), dtype_names[canonical(dtype)].mindspore)
