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
    *,
    backend: Optional[str] = None,
    dtype: Optional[str] = None,
    soc: str = "Ascend910B2",
    order: str = "both",
) -> Optional[dict]:
    """Write key/value rows into a paged KV cache, in place.

    Parameters
    ----------
    key : [T, H, Dk] float16, bfloat16, float32 or int8; token rows may be strided.
    value : [T, H, Dv], the dtype of key.
    key_cache : [num_blocks, block_size, H, Dk], contiguous; written in place.
    value_cache : [num_blocks, block_size, H, Dv], contiguous; written in place.
    slot_mapping : [T'] int32 or int64 with T' <= T. For t < T' and s = slot_mapping[t]:
        s < 0 is padding (nothing written); otherwise token t goes to block s // block_size,
        offset s % block_size. s >= num_blocks * block_size raises IndexError before any write.
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

        return torch_ops.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping)
    if module.startswith("mindspore"):
        _no_numpy_options(backend, dtype)
        from . import ms

        return ms.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping)
    if isinstance(key, np.ndarray):
        backend = backend or "cpu"
        if backend not in _NUMPY_BACKENDS:
            raise ValueError(f"reshape_and_cache: backend should be one of {_NUMPY_BACKENDS} for NumPy "
                             f"arrays but is {backend!r}")
        core = load_native(_PACKAGE, "core")
        if backend == "cpu":
            return core.run_cpu(key, value, key_cache, value_cache, slot_mapping, dtype or "")
        return core.run_emu(key, value, key_cache, value_cache, slot_mapping, soc=soc, order=order,
                            dtype=dtype or "")
    raise TypeError(f"reshape_and_cache: key should be a torch.Tensor, a mindspore.Tensor or a numpy.ndarray "
                    f"but is {type(key).__module__}.{type(key).__qualname__}")


def _no_numpy_options(backend: Optional[str], dtype: Optional[str]) -> None:
    if backend is not None or dtype is not None:
        raise ValueError("reshape_and_cache: backend= and dtype= apply to NumPy arrays only; "
                         "torch and MindSpore tensors carry their own device and dtype")
