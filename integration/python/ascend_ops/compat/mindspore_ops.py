"""MindSpore's own call forms (``mindspore.ops.*``), translated to ascend-ops.

``mindspore.ops.sparse_flash_attention(...)`` -> :func:`ascend_ops.sparse_flash_attention.ms.sparse_flash_attention`.
Import ``mindspore`` before this module (as before any of our MindSpore front doors).
"""
from __future__ import annotations

import mindspore as _ms
from mindspore import ops as _ms_ops

from ._require import require_op

__all__ = ["sparse_flash_attention"]

# At import, so that graph compilers see a plain module attribute (ImportError names the package).
_ops = require_op("ascend_ops.sparse_flash_attention.ms", "ascend-op-sparse-flash-attention", __name__)

_NO_LIMIT = 9223372036854775807  # 2**63 - 1


def sparse_flash_attention(query, key, value, sparse_indices, scale_value, *, block_table=None,
                           actual_seq_lengths_query=None, actual_seq_lengths_kv=None, query_rope=None,
                           key_rope=None, sparse_block_size=1, layout_query="BSND", layout_kv="BSND", sparse_mode=3,
                           pre_tokens=_NO_LIMIT, next_tokens=_NO_LIMIT, attention_mode=0, return_softmax_lse=False):
    """``mindspore.ops.sparse_flash_attention`` (MindSpore 2.10 / 2.11): the same positional /
    keyword-only split, keywords and defaults, so ``layout_kv`` defaults to ``"BSND"`` and
    ``attention_mode`` to 0, which MindSpore documents as unsupported ("currently only
    attention_mode=2"): with that default our op raises ValueError ("attention_mode should be 2").
    Pass ``attention_mode=2``.

    Returns ``(attention_out, softmax_max, softmax_sum)`` as MindSpore: without
    ``return_softmax_lse`` the last two are empty float32 tensors of shape (0,) (MindSpore's shape
    inference gives (0,) there; our op returns None). PyNative and graph mode (``ms.jit``, GRAPH_MODE
    Cells) alike; MindSpore documents ``return_softmax_lse`` as unsupported in graph mode, ours
    takes it.
    """
    out, softmax_max, softmax_sum = _ops.sparse_flash_attention(
        query, key, value, sparse_indices, scale_value, block_table, actual_seq_lengths_query, actual_seq_lengths_kv,
        query_rope, key_rope, sparse_block_size, layout_query, layout_kv, sparse_mode, pre_tokens, next_tokens,
        attention_mode, return_softmax_lse)
    if not return_softmax_lse:
        softmax_max = _ms_ops.zeros((0,), _ms.float32)
        softmax_sum = _ms_ops.zeros((0,), _ms.float32)
    return out, softmax_max, softmax_sum
