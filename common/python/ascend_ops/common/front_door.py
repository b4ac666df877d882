"""What every op's public function does with NumPy arrays (its ``api.py``, generated from the op's
description by ``ascend_ops.common.codegen``, hands torch tensors to ``ascend_ops.<op>.torch_ops``
and MindSpore tensors to ``ascend_ops.<op>.ms`` itself, in code torch.compile traces): the op's
``_core``, the cpu or emu backend."""
from __future__ import annotations

import inspect
from typing import Any, NamedTuple, Optional, Tuple

import numpy as np

from ascend_ops.common.loader import load_native

__all__ = ["Spec", "no_numpy_options", "call_numpy", "schema_default"]

_NUMPY_BACKENDS = ("cpu", "emu")


class Spec(NamedTuple):
    """The facts of an op's description the dispatch needs."""

    name: str  # the function (the description's name)
    package: str  # the import package, "ascend_ops.<op>"
    params: Tuple[str, ...]
    keyword_only: Tuple[str, ...]
    has_outputs: bool
    first_tensor: int  # the argument whose type picks the framework


def schema_default(text: Optional[str]) -> Any:
    """A description default (``"0"``, ``"1.0"``, ``"None"``, ``"False"``, ``'"BSND"'``) as its Python
    value; ``inspect.Parameter.empty`` for a required argument (no default)."""
    if text is None:
        return inspect.Parameter.empty
    if text in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[text]
    if text.startswith('"'):
        return text.strip('"')
    try:
        return int(text)
    except ValueError:
        return float(text)


def no_numpy_options(spec: Spec, backend: Optional[str], dtype: Optional[str]) -> None:
    """torch and MindSpore tensors: the NumPy options must not be given."""
    if backend is not None or dtype is not None:
        raise ValueError(f"{spec.name}: backend= and dtype= apply to NumPy arrays only; "
                         "torch and MindSpore tensors carry their own device and dtype")


def call_numpy(spec: Spec, args: Tuple[Any, ...], backend: Optional[str], dtype: Optional[str], soc: str,
               order: str) -> Any:
    """Run the op on NumPy arrays (``args``: every argument, in the description's order) with the
    cpu or emu backend; TypeError when the first tensor argument is not an array."""
    positional = [a for n, a in zip(spec.params, args) if n not in spec.keyword_only]
    keywords = {n: a for n, a in zip(spec.params, args) if n in spec.keyword_only}
    first = args[spec.first_tensor]
    if not isinstance(first, np.ndarray):
        raise TypeError(f"{spec.name}: {spec.params[spec.first_tensor]} should be a torch.Tensor, a mindspore.Tensor "
                        f"or a numpy.ndarray but is {type(first).__module__}.{type(first).__qualname__}")
    backend = backend or "cpu"
    if backend not in _NUMPY_BACKENDS:
        raise ValueError(f"{spec.name}: backend should be one of {_NUMPY_BACKENDS} for NumPy arrays but is "
                         f"{backend!r}")
    core = load_native(spec.package, "core")
    if backend == "cpu":
        return core.run_cpu(*positional, dtype=dtype or "", **keywords)
    if not core.HAS_EMU:
        raise RuntimeError(f"{spec.name}: backend 'emu' was not built (AOP_WITH_EMU is off)")
    result = core.run_emu(*positional, soc=soc, order=order, dtype=dtype or "", **keywords)
    # The launch report: the result of an op that returns nothing; after an op's outputs, dropped.
    return result[:-1] if spec.has_outputs else result
