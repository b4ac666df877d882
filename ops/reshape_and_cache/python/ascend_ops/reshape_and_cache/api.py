"""The public entry: one function for torch tensors, MindSpore tensors and NumPy arrays."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ascend_ops.common.loader import load_native

__all__ = ["reshape_and_cache"]

_PACKAGE = "ascend_ops.reshape_and_cache"
_NUMPY_BACKENDS = ("cpu", "emu")


def reshape_and_cache(
    key: Any,
    value: Any,
    key_cache: Any,
    value_cache: Any,
    slot_mapping: Any,
    cache_mode: int = 0,
    head_num: Optional[int] = None,
    *,
    backend: Optional[str] = None,
    dtype: Optional[str] = None,
    soc: str = "Ascend910B2",
    order: str = "both",
) -> Optional[dict]:
    """Write key/value rows into a paged KV cache, in place.

    Parameters
    ----------
    key : [T, H, Dk] (or [T, H*Dk] with head_num) float16, bfloat16, float32 or int8; token
        rows may be strided.
    value : [T, H, Dv] (or [T, H*Dv]), the dtype of key; None for a key-only cache.
    key_cache : contiguous, written in place. cache_mode 0: [num_blocks, block_size, H, Dk];
        cache_mode 1: [num_blocks, H*Dk/F, block_size, F] (FRACTAL_NZ, F = 16 for float16 /
        bfloat16, 32 for int8; Dk a multiple of F).
    value_cache : the same with Dv; None exactly when value is None.
    slot_mapping : [T'] int32 or int64 with T' <= T. For t < T' and s = slot_mapping[t]:
        s < 0 is padding (nothing written); otherwise token t goes to block s // block_size,
        offset s % block_size. s >= num_blocks * block_size raises IndexError before any write.
    cache_mode : 0 (ND, default) or 1 (NZ): element j of a token's H*D row goes to
        key_cache[b, j // F, o, j % F] (b = s // block_size, o = s % block_size).
    head_num : H, required when key / value are given as [T, H*D]; must divide H*D. With a
        [T, H, D] key it must equal H.
    backend : NumPy inputs only: "cpu" (default, the C++ kernel) or "emu" (the AscendC kernel
        on the CPU emulator). torch and MindSpore tensors run on their own device.
    dtype : NumPy inputs only: "bfloat16" to read uint16 arrays as bfloat16 bit patterns.
    soc : NumPy inputs with backend="emu": the platform preset to emulate.
    order : backend="emu": run the blocks "in_order", "shuffled", or "both" (and check that
        the results agree).

    Returns
    -------
    None, or for backend="emu" the emulator's launch report (GM traffic, DMA, UB use).

    Raises
    ------
    TypeError, ValueError, IndexError naming the argument, the expected and the actual value;
    the caches are then unchanged.
    """
    module = type(key).__module__
    if module.startswith("torch"):
        _no_numpy_options(backend, dtype)
        from . import torch_ops

        return torch_ops.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, cache_mode, head_num)
    if module.startswith("mindspore"):
        _no_numpy_options(backend, dtype)
        from . import ms

        return ms.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, cache_mode, head_num)
    if isinstance(key, np.ndarray):
        backend = backend or "cpu"
        if backend not in _NUMPY_BACKENDS:
            raise ValueError(f"reshape_and_cache: backend should be one of {_NUMPY_BACKENDS} for NumPy "
                             f"arrays but is {backend!r}")
        core = load_native(_PACKAGE, "core")
        attrs = dict(dtype=dtype or "", cache_mode=_int_attr("cache_mode", cache_mode),
                     head_num=_int_attr("head_num", 0 if head_num is None else head_num))
        if backend == "cpu":
            return core.run_cpu(key, value, key_cache, value_cache, slot_mapping, **attrs)
        return core.run_emu(key, value, key_cache, value_cache, slot_mapping, soc=soc, order=order, **attrs)
    raise TypeError(f"reshape_and_cache: key should be a torch.Tensor, a mindspore.Tensor or a numpy.ndarray "
                    f"but is {type(key).__module__}.{type(key).__qualname__}")


def _int_attr(name: str, v: Any) -> int:
    """An int attribute, refused (TypeError) if it is not an integer (bool included)."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"reshape_and_cache: {name} should be an int but is {type(v).__name__} {v!r}")
    if not -2**63 <= int(v) < 2**63:
        raise ValueError(f"reshape_and_cache: {name} should fit in int64 but is {v}")
    return int(v)


def _no_numpy_options(backend: Optional[str], dtype: Optional[str]) -> None:
    if backend is not None or dtype is not None:
        raise ValueError("reshape_and_cache: backend= and dtype= apply to NumPy arrays only; "
                         "torch and MindSpore tensors carry their own device and dtype")
