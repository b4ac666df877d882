"""PyTorch front door of adv_step_flash: ``torch.ops.ascend_ops.advance_step_flashattn``.

Importing this module loads the op's native ``_torch`` module through
:func:`ascend_ops.common.loader.load_native` (which imports torch first and checks the module
against the installed ascend-op-common). Its static initialisers register the schema::

    advance_step_flashattn(SymInt num_seqs, SymInt num_queries, int block_size, Tensor(a!) input_tokens,
                           Tensor sampled_token_ids, Tensor(b!) input_positions, Tensor(c!) seq_lens,
                           Tensor(d!) slot_mapping, Tensor block_tables) -> ()

with a CPU kernel, a Meta kernel (FakeTensor / ``torch.compile``, SymInt-safe), an
ADInplaceOrView kernel (version counters of the four outputs) and, where the op was built with
torch_npu and CANN, an NPU (PrivateUse1) kernel. It also registers
``torch.ops.ascend_ops._adv_step_flash_noop``, an op of the same schema shape that does
nothing: the benchmark's baseline for the cost of dispatching such a call.

Where torchair is installed (or torch_npu, which ships it, is already imported), the torchair
GE converter of the op is registered too; call :func:`register_torchair_converter` after
importing torch_npu if it was imported later than this module.
"""
from __future__ import annotations


from ascend_ops.common import torchair as _torchair
from ascend_ops.common.loader import load_native

# Imports torch (TORCH_DEVICE_BACKEND_AUTOLOAD=0 unless the caller set it) and registers the op.
_native = load_native("ascend_ops.adv_step_flash", "torch")

import torch  # noqa: E402  (already imported by load_native)

__all__ = ["advance_step_flashattn", "register_torchair_converter"]

_OP = torch.ops.ascend_ops.advance_step_flashattn.default


def advance_step_flashattn(
    num_seqs: int,
    num_queries: int,
    block_size: int,
    input_tokens: torch.Tensor,
    sampled_token_ids: torch.Tensor,
    input_positions: torch.Tensor,
    seq_lens: torch.Tensor,
    slot_mapping: torch.Tensor,
    block_tables: torch.Tensor,
) -> None:
    """Advance a multi-step decode batch's metadata by one step, in place.

    For ``i < num_queries``, with ``pos = seq_lens[i]``::

        input_tokens[i]    = sampled_token_ids[i]
        input_positions[i] = pos
        seq_lens[i]        = pos + 1
        slot_mapping[i]    = block_tables[i, pos // block_size] * block_size + pos % block_size

    and for the padding rows ``num_queries <= i < num_seqs``: token 0, position 0, slot -1,
    seq_lens unchanged. Exact integer arithmetic.

    Parameters
    ----------
    num_seqs, num_queries, block_size : int
        ``0 < num_queries <= num_seqs``, ``block_size > 0``.
    input_tokens : torch.Tensor
        [num_seqs] int64 or int32, contiguous. Written.
    sampled_token_ids : torch.Tensor
        [num_queries, 1] or [num_queries] int64 or int32, contiguous.
    input_positions : torch.Tensor
        [num_seqs] int64 or int32, contiguous. Written.
    seq_lens : torch.Tensor
        [num_seqs] int32 or int64, contiguous. Read and written.
    slot_mapping : torch.Tensor
        [num_seqs] int64 or int32, contiguous. Written.
    block_tables : torch.Tensor
        [num_seqs, max_blocks_per_seq] int32 or int64; rows contiguous, the row stride may
        exceed the width.

    Raises
    ------
    TypeError
        A dtype is not int32 / int64.
    ValueError
        A count, rank, shape, layout or device is wrong; a negative seq_len or block id; a value
        that does not fit its output's dtype (an int32 slot_mapping overflow, ...).
    IndexError
        ``seq_lens[i] // block_size >= max_blocks_per_seq``.

    On any error all four outputs are left exactly as they were.
    """
    _OP(num_seqs, num_queries, block_size, input_tokens, sampled_token_ids, input_positions, seq_lens,
        slot_mapping, block_tables)


def register_torchair_converter() -> bool:
    """Register the torchair GE converter of the op if torchair is installed (True), else
    return False; see :func:`ascend_ops.common.torchair.register_converter`."""
    return _torchair.register_converter(__package__)


def _register_torchair_converter_on_import() -> None:
    _torchair.register_converter_on_import(__package__, "advance_step_flashattn")


_register_torchair_converter_on_import()
