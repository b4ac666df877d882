"""PyTorch front door of reshape_and_cache: ``torch.ops.ascend_ops.reshape_and_cache``.

Importing this module loads the op's native ``_torch`` module through
:func:`ascend_ops.common.loader.load_native` (which imports torch first and checks the module
against the installed ascend-op-common). Its static initialisers register the schema
``reshape_and_cache(Tensor key, Tensor value, Tensor(a!) key_cache, Tensor(b!) value_cache,
Tensor slot_mapping) -> ()`` with a CPU kernel, a Meta kernel (FakeTensor / ``torch.compile``)
and, where the op was built with torch_npu and CANN, an NPU (PrivateUse1) kernel. After that
``torch.ops.ascend_ops.reshape_and_cache`` works in eager mode and under ``torch.compile``.

Where torchair is installed (or torch_npu, which ships it, is already imported), the torchair
GE converter of the op is registered too; call :func:`register_torchair_converter` after
importing torch_npu if it was imported later than this module.
"""
from __future__ import annotations


from ascend_ops.common import torchair as _torchair
from ascend_ops.common.loader import load_native

# Imports torch (TORCH_DEVICE_BACKEND_AUTOLOAD=0 unless the caller set it) and registers the op.
_native = load_native("ascend_ops.reshape_and_cache", "torch")

import torch  # noqa: E402  (already imported by load_native)

__all__ = ["reshape_and_cache", "register_torchair_converter"]

_OP = torch.ops.ascend_ops.reshape_and_cache.default


def reshape_and_cache(
    key: torch.Tensor,
    value: torch.Tensor,
    key_cache: torch.Tensor,
    value_cache: torch.Tensor,
    slot_mapping: torch.Tensor,
) -> None:
    """Write this step's key and value rows into a paged KV cache, in place.

    For every t < T' with s = slot_mapping[t]::

        key_cache[s // block_size, s % block_size] = key[t]      if s >= 0
        value_cache[s // block_size, s % block_size] = value[t]  if s >= 0

    Parameters
    ----------
    key : torch.Tensor
        [T, H, Dk], float16, bfloat16, float32 or int8. Token rows may be strided
        (a view of a fused qkv tensor); the [H, Dk] part is contiguous.
    value : torch.Tensor
        [T, H, Dv], the dtype of key. Dv may differ from Dk.
    key_cache : torch.Tensor
        [num_blocks, block_size, H, Dk], contiguous, the dtype of key. Written in place.
    value_cache : torch.Tensor
        [num_blocks, block_size, H, Dv], contiguous, the dtype of key. Written in place.
    slot_mapping : torch.Tensor
        [T'] int32 or int64 with T' <= T: only the first T' tokens are written (the rest is
        padding of a captured graph); a negative slot is a padding token.

    Raises
    ------
    TypeError
        A dtype is not supported or does not match key's.
    ValueError
        A rank, shape, layout or device does not match.
    IndexError
        A slot is >= num_blocks * block_size (names the token and the slot).

    On any error both caches are left exactly as they were. Duplicate non-negative slots are a
    caller error: which token wins is not specified.
    """
    _OP(key, value, key_cache, value_cache, slot_mapping)


def register_torchair_converter() -> bool:
    """Register the torchair GE converter of the op if torchair is installed (True), else
    return False; see :func:`ascend_ops.common.torchair.register_converter`."""
    return _torchair.register_converter(__package__)


def _register_torchair_converter_on_import() -> None:
    _torchair.register_converter_on_import(__package__, "reshape_and_cache")


_register_torchair_converter_on_import()
