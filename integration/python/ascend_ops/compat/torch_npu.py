"""torch_npu's call forms (``torch_npu.npu_*``), translated to ascend-ops (PyTorch)."""
from __future__ import annotations

from ._indexer import NO_LIMIT as _NO_LIMIT
from ._indexer import npu_lightning_indexer_pair as _indexer_pair
from ._quant_indexer import lightning_indexer_quant as _lightning_indexer_quant
from ._require import require_op
from ._sfa import npu_sparse_flash_attention as _sparse_flash_attention

_op = require_op("ascend_ops.sparse_flash_attention", "ascend-op-sparse-flash-attention", __name__)
_li_op = require_op("ascend_ops.lightning_indexer", "ascend-op-lightning-indexer", __name__)
_liq_op = require_op("ascend_ops.lightning_indexer_quant", "ascend-op-lightning-indexer", __name__)

__all__ = ["npu_lightning_indexer", "npu_quant_lightning_indexer", "npu_sparse_flash_attention"]


def npu_lightning_indexer(query, key, weights, *, actual_seq_lengths_query=None, actual_seq_lengths_key=None,
                          block_table=None, layout_query="BSND", layout_key="BSND", sparse_count=2048,
                          sparse_mode=3, pre_tokens=_NO_LIMIT, next_tokens=_NO_LIMIT, return_value=False):
    """``torch_npu.npu_lightning_indexer`` (op-plugin ``docs/context/torch_npu-npu_lightning_indexer.md``
    and ``LightningIndexerKernelNpuOpApi.cpp``): the top-``sparse_count`` key positions per query
    token. Same positional / keyword-only split, keywords and defaults: ``layout_key`` defaults
    to "BSND" (pass "PA_BSND" for a paged cache), ``pre_tokens`` / ``next_tokens`` to 2**63 - 1,
    the only value torch_npu supports (anything else is refused with ValueError). Weights
    ``[B, S1, N1]`` / ``[T, N1]``, or with a trailing 1.

    Returns ``(sparse_indices, sparse_values)`` as torch_npu: int32 indices; with
    ``return_value`` the scores in query's dtype (op-plugin allocates them so; ours are float32,
    rounded once, -inf at -1), else an empty tensor of shape [0] in query's dtype. torch_npu
    documents ``return_value`` for non-PA keys only; ours takes it with every layout.
    ``sparse_count``: ours takes 1..8192 (torch_npu documents [1, 2048]).
    -> :func:`ascend_ops.lightning_indexer.lightning_indexer`."""
    return _indexer_pair(_li_op, "npu_lightning_indexer", query, key, weights, actual_seq_lengths_query,
                         actual_seq_lengths_key, block_table, layout_query, layout_key, sparse_count, sparse_mode,
                         pre_tokens, next_tokens, return_value)


def npu_sparse_flash_attention(query, key, value, sparse_indices, scale_value, *, block_table=None,
                               actual_seq_lengths_query=None, actual_seq_lengths_kv=None, query_rope=None,
                               key_rope=None, sparse_block_size=1, layout_query="BSND", layout_kv="BSND",
                               sparse_mode=3, pre_tokens=_NO_LIMIT, next_tokens=_NO_LIMIT, attention_mode=0,
                               return_softmax_lse=False, sinks=None):
    """``torch_npu.npu_sparse_flash_attention``: MLA-absorbed attention over the selected key
    positions. Same positional / keyword-only split, keywords and defaults as torch_npu
    (op-plugin ``op_plugin_functions.yaml``), so ``layout_kv`` defaults to ``"BSND"`` and
    ``attention_mode`` to 0 -- which torch_npu's own tiling refuses (only 2, MLA-absorb, is
    supported): called with that default, our op raises ValueError ("attention_mode should be
    2") as torch_npu fails there. Pass ``attention_mode=2``, as every caller does.

    Returns ``(attention_out, softmax_max, softmax_sum)`` as torch_npu: without
    ``return_softmax_lse`` the last two are empty float32 tensors of shape [0].

    ``sinks`` (Ascend 950's per-head attention sink, ``aclnnSparseFlashAttentionV2``; "not
    supported" on Atlas A2 / A3) has no counterpart in our op: anything but None is refused with
    ValueError. -> :func:`ascend_ops.sparse_flash_attention.sparse_flash_attention`."""
    if sinks is not None:
        raise ValueError("npu_sparse_flash_attention: sinks should be None (Ascend 950's attention sink, "
                         "aclnnSparseFlashAttentionV2, is not supported by ascend_ops.sparse_flash_attention) "
                         f"but is a {type(sinks).__name__}")
    return _sparse_flash_attention(_op, query, key, value, sparse_indices, scale_value, block_table,
                                   actual_seq_lengths_query, actual_seq_lengths_kv, query_rope, key_rope,
                                   sparse_block_size, layout_query, layout_kv, sparse_mode, pre_tokens, next_tokens,
                                   attention_mode, return_softmax_lse)


def npu_quant_lightning_indexer(query, key, weights, query_dequant_scale, key_dequant_scale, query_quant_mode,
                                key_quant_mode, *, actual_seq_lengths_query=None, actual_seq_lengths_key=None,
                                block_table=None, layout_query="BSND", layout_key="BSND", sparse_count=2048,
                                sparse_mode=3, pre_tokens=_NO_LIMIT, next_tokens=_NO_LIMIT, query_dtype=None,
                                key_dtype=None):
    """``torch_npu.npu_quant_lightning_indexer``: the int8 indexer with dequant scales. Same
    positional / keyword-only split, keywords and defaults as torch_npu's documentation
    (``query_quant_mode`` / ``key_quant_mode`` positional and required, 0 the only value;
    ``layout_key`` "BSND"). Returns the int32 indices only, as the original.

    ``pre_tokens`` / ``next_tokens`` (a sliding window) are taken at their default only, and
    ``query_dtype`` / ``key_dtype`` (Ascend 950's fp8 / HiFloat8 inputs) as None only: anything
    else is refused with ValueError. -> :func:`ascend_ops.lightning_indexer_quant.lightning_indexer_quant`."""
    if pre_tokens != _NO_LIMIT or next_tokens != _NO_LIMIT:
        raise ValueError("npu_quant_lightning_indexer: pre_tokens and next_tokens should be 2**63 - 1 (no sliding "
                         f"window: ascend_ops.lightning_indexer_quant has none) but are {pre_tokens} and {next_tokens}")
    if query_dtype is not None or key_dtype is not None:
        raise ValueError("npu_quant_lightning_indexer: query_dtype and key_dtype should be None (int8 inputs; the fp8 "
                         f"forms are not supported) but are {query_dtype!r} and {key_dtype!r}")
    return _lightning_indexer_quant(_liq_op, query, key, weights, query_dequant_scale, key_dequant_scale,
                                    actual_seq_lengths_query, actual_seq_lengths_key, block_table, query_quant_mode,
                                    key_quant_mode, layout_query, layout_key, sparse_count, sparse_mode)
