"""The public entry: one function for torch tensors, MindSpore tensors and NumPy arrays."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ascend_ops.common.loader import load_native

__all__ = ["advance_step_flashattn"]

_PACKAGE = "ascend_ops.adv_step_flash"
_NUMPY_BACKENDS = ("cpu", "emu")


def advance_step_flashattn(
    num_seqs: int,
    num_queries: int,
    block_size: int,
    input_tokens: Any,
    sampled_token_ids: Any,
    input_positions: Any,
    seq_lens: Any,
    slot_mapping: Any,
    block_tables: Any,
    *,
    backend: Optional[str] = None,
    soc: str = "Ascend910B2",
    order: str = "both",
) -> Optional[dict]:
    """Advance a multi-step decode batch's metadata by one step, in place.

    For ``i < num_queries``, with ``pos = seq_lens[i]``::

        input_tokens[i]    = sampled_token_ids[i]
        input_positions[i] = pos
        seq_lens[i]        = pos + 1
        slot_mapping[i]    = block_tables[i, pos // block_size] * block_size + pos % block_size

    For the padding rows ``num_queries <= i < num_seqs``: ``input_tokens[i] = 0``,
    ``input_positions[i] = 0``, ``slot_mapping[i] = -1``, ``seq_lens[i]`` unchanged. Integer
    arithmetic only: exact for every position that fits the dtypes.

    Parameters
    ----------
    num_seqs, num_queries, block_size : int
        ``0 < num_queries <= num_seqs``, ``block_size > 0``.
    input_tokens : [num_seqs] int64 or int32, contiguous; written.
    sampled_token_ids : [num_queries, 1] or [num_queries] int64 or int32, contiguous.
    input_positions : [num_seqs] int64 or int32, contiguous; written.
    seq_lens : [num_seqs] int32 or int64, contiguous; read and written.
    slot_mapping : [num_seqs] int64 or int32, contiguous; written.
    block_tables : [num_seqs, max_blocks_per_seq] int32 or int64; rows may be strided (the row
        stride may exceed the width), each row contiguous.
    backend : NumPy inputs only: "cpu" (default, the C++ kernel) or "emu" (the AscendC kernel
        on the CPU emulator). torch and MindSpore tensors run on their own device.
    soc : NumPy inputs with backend="emu": the platform preset to emulate.
    order : backend="emu": run the blocks "in_order", "shuffled", or "both" (and check that
        the results agree).

    Returns
    -------
    None, or for backend="emu" the emulator's launch report (GM traffic, DMA, UB use).

    Raises
    ------
    TypeError
        A dtype is not int32 / int64.
    ValueError
        A count, rank, shape, layout or device is wrong; a seq_len or block id is negative; a
        token, position, new seq_len or slot does not fit its output's dtype (an int32
        slot_mapping overflow).
    IndexError
        ``seq_lens[i] // block_size >= max_blocks_per_seq``.

    On any error all four outputs are left exactly as they were.
    """
    module = type(input_tokens).__module__
    args = (num_seqs, num_queries, block_size, input_tokens, sampled_token_ids, input_positions, seq_lens,
            slot_mapping, block_tables)
    if module.startswith("torch"):
        _no_numpy_options(backend)
        from . import torch_ops

        return torch_ops.advance_step_flashattn(*args)
    if module.startswith("mindspore"):
        _no_numpy_options(backend)
        from . import ms

        return ms.advance_step_flashattn(*args)
    if isinstance(input_tokens, np.ndarray):
        backend = backend or "cpu"
        if backend not in _NUMPY_BACKENDS:
            raise ValueError(f"advance_step_flashattn: backend should be one of {_NUMPY_BACKENDS} for NumPy "
                             f"arrays but is {backend!r}")
        core = load_native(_PACKAGE, "core")
        if backend == "cpu":
            return core.run_cpu(*args)
        return core.run_emu(*args, soc=soc, order=order)
    raise TypeError(f"advance_step_flashattn: input_tokens should be a torch.Tensor, a mindspore.Tensor or a "
                    f"numpy.ndarray but is {type(input_tokens).__module__}.{type(input_tokens).__qualname__}")


def _no_numpy_options(backend: Optional[str]) -> None:
    if backend is not None:
        raise ValueError("advance_step_flashattn: backend= applies to NumPy arrays only; torch and MindSpore "
                         "tensors carry their own device")
