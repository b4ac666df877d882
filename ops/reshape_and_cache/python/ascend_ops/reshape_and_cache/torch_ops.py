"""PyTorch front door of reshape_and_cache: ``torch.ops.ascend_ops.reshape_and_cache``.

Importing this module loads the op's native ``_torch`` module through
:func:`ascend_ops.common.loader.load_native` (which imports torch first and checks the module
against the installed ascend-op-common). Its static initialisers register the schema
``reshape_and_cache(Tensor key, Tensor? value, Tensor(a!) key_cache, Tensor(b!)? value_cache,
Tensor slot_mapping, int cache_mode=0, int? head_num=None) -> ()`` with a CPU kernel, a Meta kernel (FakeTensor / ``torch.compile``)
and, where the op was built with torch_npu and CANN, an NPU (PrivateUse1) kernel. After that
``torch.ops.ascend_ops.reshape_and_cache`` works in eager mode and under ``torch.compile``.

Where torchair is installed (or torch_npu, which ships it, is already imported), the torchair
GE converter of the op is registered too; call :func:`register_torchair_converter` after
importing torch_npu if it was imported later than this module.
"""
from __future__ import annotations

from typing import Optional

from ascend_ops.common import torchair as _torchair
from ascend_ops.common.loader import load_native

# Imports torch (TORCH_DEVICE_BACKEND_AUTOLOAD=0 unless the caller set it) and registers the op.
_native = load_native("ascend_ops.reshape_and_cache", "torch")

import torch  # noqa: E402  (already imported by load_native)

__all__ = ["reshape_and_cache", "register_torchair_converter"]

_OP = torch.ops.ascend_ops.reshape_and_cache.default


def reshape_and_cache(
    key: torch.Tensor,
    value: Optional[torch.Tensor],
    key_cache: torch.Tensor,
    value_cache: Optional[torch.Tensor],
    slot_mapping: torch.Tensor,
    cache_mode: int = 0,
    head_num: Optional[int] = None,
) -> None:
    """Write this step's key and value rows into a paged KV cache, in place.

    For every t < T' with s = slot_mapping[t]::

        key_cache[s // block_size, s % block_size] = key[t]      if s >= 0
        value_cache[s // block_size, s % block_size] = value[t]  if s >= 0

    Parameters
    ----------
    key : torch.Tensor
        [T, H, Dk] (or [T, H*Dk] with head_num), float16, bfloat16, float32 or int8. Token
        rows may be strided (a view of a fused qkv tensor); the [H, Dk] part is contiguous.
    value : torch.Tensor or None
        [T, H, Dv] (or [T, H*Dv]), the dtype of key. Dv may differ from Dk. None: key-only.
    key_cache : torch.Tensor
        Contiguous, the dtype of key, written in place. cache_mode 0:
        [num_blocks, block_size, H, Dk]; cache_mode 1 (FRACTAL_NZ):
        [num_blocks, H*Dk/F, block_size, F], F = 16 (float16 / bfloat16) or 32 (int8).
    value_cache : torch.Tensor or None
        The same with Dv; None exactly when value is None.
    slot_mapping : torch.Tensor
        [T'] int32 or int64 with T' <= T: only the first T' tokens are written (the rest is
        padding of a captured graph); a negative slot is a padding token.
    cache_mode : int
        0 (ND, default) or 1 (NZ): element j of a token's H*D row goes to
        ``key_cache[s // block_size, j // F, s % block_size, j % F]``.
    head_num : int or None
        H, required when key / value are [T, H*D]; must divide H*D.

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
    _OP(key, value, key_cache, value_cache, slot_mapping, cache_mode, head_num)


def register_torchair_converter() -> bool:
    """Register the torchair GE converter of the op if torchair is installed (True), else
    return False; see :func:`ascend_ops.common.torchair.register_converter`."""
    return _torchair.register_converter(__package__)


def _register_torchair_converter_on_import() -> None:
    _torchair.register_converter_on_import(__package__, "reshape_and_cache")


_register_torchair_converter_on_import()
