"""The public entry: one function for torch tensors, MindSpore tensors and NumPy arrays."""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from ascend_ops.common.loader import load_native

__all__ = ["lightning_indexer"]

_PACKAGE = "ascend_ops.lightning_indexer"
_NUMPY_BACKENDS = ("cpu", "emu")


def lightning_indexer(
    query: Any,
    key: Any,
    weights: Any,
    *,
    actual_seq_lengths_query: Any = None,
    actual_seq_lengths_key: Any = None,
    block_table: Any = None,
    layout_query: str = "BSND",
    layout_key: str = "PA_BSND",
    sparse_count: int = 2048,
    sparse_mode: int = 3,
    return_value: bool = False,
    backend: Optional[str] = None,
    dtype: Optional[str] = None,
) -> Tuple[Any, Optional[Any]]:
    """Indices of the top ``sparse_count`` visible keys of every query row.

    ``score[r, j] = sum_h weights[r, h] * ReLU(dot(query[r, h, :], key[j, g, :]))`` with float32
    accumulation, over the query heads h of key head g (N1 / N2 of them; N2 = 1 on NPU).

    Parameters
    ----------
    query : [B, S1, N1, D] (layout_query "BSND") or [T1, N1, D] ("TND"); float16, bfloat16
        (float32 on CPU). Contiguous.
    key : [num_blocks, block_size, N2, D] ("PA_BSND"), [B, S2, N2, D] ("BSND") or
        [T2, N2, D] ("TND"); the dtype of query. Contiguous. N2 divides N1.
    weights : [B, S1, N1] or [T1, N1]; the dtype of query or float32.
    actual_seq_lengths_query : [B] int32 / int64. BSND: each batch's act_s1 (default S1).
        TND (required): cumulative ends of the batches' rows.
    actual_seq_lengths_key : [B] int32 / int64. PA_BSND (required) and BSND (default S2): each
        batch's act_s2. TND (required): cumulative ends.
    block_table : [B, max_blocks] int32 / int64, PA_BSND only: logical key j of batch b is
        key[block_table[b][j // block_size], j % block_size].
    layout_query, layout_key : see above.
    sparse_count : 1 <= K <= 8192.
    sparse_mode : 0 (every key j < act_s2 visible) or 3 (causal, aligned to the end:
        j <= act_s2 - act_s1 + r).
    return_value : also return the scores.
    backend : NumPy inputs only: "cpu" (default, the C++ kernel) or "emu" (the AscendC kernel
        run by the emulator on the Ascend910B2 preset, both block orders; float16 / bfloat16,
        N2 = 1, D = 128, N1 <= 64 and block_size a multiple of 16 <= 1024, as on the NPU).
    dtype : NumPy inputs only: "bfloat16" to read uint16 arrays as bfloat16 bit patterns.
        torch and MindSpore tensors carry their own device and dtype (MindSpore: see
        :mod:`ascend_ops.lightning_indexer.ms`, PyNative and Graph mode).

    Returns
    -------
    (sparse_indices, sparse_values)
        int32 [B, S1, N2, K] or [T1, N2, K]: the visible keys by descending score, ties to the
        smaller index, -1 where fewer than K keys are visible (and on rows beyond act_s1 / with
        no visible key). sparse_values: float32 scores of the same shape, -inf at -1, or None
        unless return_value.

    Raises
    ------
    TypeError, ValueError, IndexError naming the argument, the expected and the actual value.
    """
    module = type(query).__module__
    kwargs = dict(actual_seq_lengths_query=actual_seq_lengths_query, actual_seq_lengths_key=actual_seq_lengths_key,
                  block_table=block_table, layout_query=layout_query, layout_key=layout_key,
                  sparse_count=sparse_count, sparse_mode=sparse_mode, return_value=return_value)
    if module.startswith("torch"):
        _no_numpy_options(backend, dtype)
        from . import torch_ops

        return torch_ops.lightning_indexer(query, key, weights, **kwargs)
    if module.startswith("mindspore"):
        _no_numpy_options(backend, dtype)
        from . import ms

        return ms.lightning_indexer(query, key, weights, **kwargs)
    if isinstance(query, np.ndarray):
        backend = backend or "cpu"
        if backend not in _NUMPY_BACKENDS:
            raise ValueError(f"lightning_indexer: backend should be one of {_NUMPY_BACKENDS} for NumPy "
                             f"arrays but is {backend!r}")
        core = load_native(_PACKAGE, "core")
        if backend == "emu":
            if not core.HAS_EMU:
                raise RuntimeError("lightning_indexer: backend 'emu' was not built (AOP_WITH_EMU is off)")
            indices, values, _report = core.run_emu(query, key, weights, dtype=dtype or "", **kwargs)
            return indices, values
        return core.run_cpu(query, key, weights, dtype=dtype or "", **kwargs)
    raise TypeError(f"lightning_indexer: query should be a torch.Tensor, a mindspore.Tensor or a numpy.ndarray "
                    f"but is {type(query).__module__}.{type(query).__qualname__}")


def _no_numpy_options(backend: Optional[str], dtype: Optional[str]) -> None:
    if backend is not None or dtype is not None:
        raise ValueError("lightning_indexer: backend= and dtype= apply to NumPy arrays only; "
                         "torch and MindSpore tensors carry their own device and dtype")
