"""vllm-ascend's call forms (``torch.ops._C_ascend.npu_lightning_indexer``,
``torch.ops._C_ascend.npu_sparse_flash_attention``, the C8 KV-cache write), translated to
ascend-ops (PyTorch)."""
from __future__ import annotations

from ._indexer import NO_LIMIT as _NO_LIMIT
from ._indexer import lightning_indexer as _lightning_indexer
from ._indexer import npu_lightning_indexer_pair as _indexer_pair
from ._quant_indexer import lightning_indexer_quant as _lightning_indexer_quant
from ._require import require_op
from ._sfa import npu_sparse_flash_attention as _sparse_flash_attention

_op = require_op("ascend_ops.lightning_indexer", "ascend-op-lightning-indexer", __name__)
_sfa_op = require_op("ascend_ops.sparse_flash_attention", "ascend-op-sparse-flash-attention", __name__)
_rac_op = require_op("ascend_ops.reshape_and_cache", "ascend-op-reshape-and-cache", __name__)
_liq_op = require_op("ascend_ops.lightning_indexer_quant", "ascend-op-lightning-indexer", __name__)

__all__ = ["npu_lightning_indexer", "npu_lightning_indexer_legacy", "npu_lightning_indexer_quant",
           "npu_sparse_flash_attention", "reshape_and_cache_c8"]


def npu_lightning_indexer(query, key, weights, *, actual_seq_lengths_query=None, actual_seq_lengths_key=None,
                          block_table=None, layout_query="BSND", layout_key="BSND", sparse_count=2048,
                          sparse_mode=3, pre_tokens=_NO_LIMIT, next_tokens=_NO_LIMIT, return_value=False,
                          cmp_ratio=1):
    """vllm-ascend's current ``torch.ops._C_ascend.npu_lightning_indexer`` (``csrc/torch_binding.cpp``,
    2026-08; the schema of ``torch_npu.npu_lightning_indexer``): the top-``sparse_count`` key
    positions per query token. Same keywords and defaults (``layout_key`` defaults to "BSND";
    query / key / weights positional or by keyword, the rest keyword-only); weights ``[T, N1]`` or
    ``[T, N1, 1]`` (BSND alike); TND lengths are cumulative ends.

    Returns ``(sparse_indices, sparse_values)`` as vllm-ascend: int32 indices, and the scores in
    query's dtype when ``return_value`` (float32 in our op, rounded once), else an empty tensor of
    shape [0] in query's dtype -- so ``topk_indices, _ = npu_lightning_indexer(...)`` works
    (vllm_ascend/device/device_op.py). ``pre_tokens`` / ``next_tokens``: only the default
    2**63 - 1 (the only value documented there); anything else is refused with ValueError.
    ``return_value`` is taken with every key layout (vllm-ascend documents it for non-PA keys).

    ``cmp_ratio`` (ours, not in the schema; default 1): vllm-ascend's DeepSeek-V4 convention,
    see :func:`npu_lightning_indexer_legacy`.
    -> :func:`ascend_ops.lightning_indexer.lightning_indexer`."""
    return _indexer_pair(_op, "npu_lightning_indexer", query, key, weights, actual_seq_lengths_query,
                         actual_seq_lengths_key, block_table, layout_query, layout_key, sparse_count, sparse_mode,
                         pre_tokens, next_tokens, return_value, cmp_ratio)


def npu_lightning_indexer_legacy(query, key, weights, *, actual_seq_lengths_query=None,
                                 actual_seq_lengths_key=None, block_table=None, layout_query="BSND",
                                 layout_key="PA_BSND", sparse_count=2048, sparse_mode=3, cmp_ratio=1):
    """The OLD single-tensor form (``torch.ops.custom.npu_lightning_indexer`` of cann-recipes-infer;
    vllm-ascend's ``_C_ascend`` op returned the same before its pair, with ``layout_key="BSND"``
    as default): returns the int32 indices ALONE. Kept under this name only, so that the current
    form never returns a different shape silently; ``layout_key`` defaults to "PA_BSND" as in
    cann-recipes-infer (pass it for vllm-ascend's old default).

    ``cmp_ratio`` (DeepSeek-V4's compressed keys) takes vllm-ascend's V4 convention (its
    ``npu_vllm_quant_lightning_indexer``): ``key`` holds compressed rows but
    ``actual_seq_lengths_key`` counts the original tokens, which this entry divides:
    ``actual_seq_lengths_key // cmp_ratio`` compressed rows, ``cmp_residual_k =
    actual_seq_lengths_key % cmp_ratio`` (per batch; TND: of the differences of the ends).
    -> :func:`ascend_ops.lightning_indexer.lightning_indexer`."""
    return _lightning_indexer(_op, query, key, weights, actual_seq_lengths_query, actual_seq_lengths_key,
                              block_table, layout_query, layout_key, sparse_count, sparse_mode, cmp_ratio)[0]


def npu_sparse_flash_attention(query, key, value, sparse_indices, scale_value, *, block_table=None,
                               actual_seq_lengths_query=None, actual_seq_lengths_kv=None, query_rope=None,
                               key_rope=None, sparse_block_size=1, layout_query="BSND", layout_kv="BSND",
                               sparse_mode=3, pre_tokens=_NO_LIMIT, next_tokens=_NO_LIMIT, attention_mode=2,
                               return_softmax_lse=False):
    """vllm-ascend's ``torch.ops._C_ascend.npu_sparse_flash_attention`` (``csrc/torch_binding.cpp``):
    the keywords and defaults of its schema -- as torch_npu's, but ``attention_mode`` defaults to
    2 (MLA-absorb, the only mode the kernel takes) and there is no ``sinks``. vllm-ascend calls it
    with every argument by keyword: TND query, PA_BSND latent cache with ``value=key``,
    ``sparse_block_size=1``, and ``return_softmax_lse=True`` under decode context parallel (it
    merges partial results with ``lse = softmax_max + log(softmax_sum)``).

    Returns ``(attention_out, softmax_max, softmax_sum)`` as vllm-ascend: without
    ``return_softmax_lse`` the last two are empty float32 tensors of shape [0].
    -> :func:`ascend_ops.sparse_flash_attention.sparse_flash_attention`."""
    return _sparse_flash_attention(_sfa_op, query, key, value, sparse_indices, scale_value, block_table,
                                   actual_seq_lengths_query, actual_seq_lengths_kv, query_rope, key_rope,
                                   sparse_block_size, layout_query, layout_kv, sparse_mode, pre_tokens, next_tokens,
                                   attention_mode, return_softmax_lse)


def reshape_and_cache_c8(key, value, key_cache, value_cache, slot_mapping, k_cache_scale, k_cache_offset,
                         v_cache_scale, v_cache_offset):
    """vllm-ascend's C8 KV-cache write (``AscendC8AttentionBackendImpl``: ``_quantize_kv_to_int8``,
    then ``torch_npu._npu_reshape_and_cache``) as one fused write: ``q = clamp(round(x / scale +
    offset), -128, 127)`` into the int8 caches (ND ``[num_blocks, block_size, H, D]``), with the
    layer's C8 parameters as vllm-ascend holds them after loading (``k_cache_scale`` /
    ``k_cache_offset`` / ``v_cache_scale`` / ``v_cache_offset``: flattened ``[1]`` or ``[H * D]``,
    in the model's dtype; offsets may be None for symmetric checkpoints). ``key`` / ``value`` may
    be padded: only the first ``len(slot_mapping)`` tokens are written. Returns None.

    The quotient is computed in float32 (ascend-ops' rule for every backend); vllm-ascend's torch
    path multiplies by a reciprocal in the scales' dtype (bfloat16 in practice), so a code can
    differ from it by one where that rounding moves it across a half-integer.
    -> ``ascend_ops.reshape_and_cache.reshape_and_cache(key, value, key_cache, value_cache,
    slot_mapping, kv_cache_dtype="int8", k_scale=..., v_scale=..., k_offset=..., v_offset=...)``."""
    _rac_op.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype="int8",
                              k_scale=k_cache_scale, v_scale=v_cache_scale, k_offset=k_cache_offset,
                              v_offset=v_cache_offset)
    return None


def npu_lightning_indexer_quant(query, key, weights, query_dequant_scale, key_dequant_scale, *,
                                actual_seq_lengths_query=None, actual_seq_lengths_key=None, block_table=None,
                                query_quant_mode=0, key_quant_mode=0, layout_query="BSND", layout_key="BSND",
                                sparse_count=2048, sparse_mode=3):
    """vllm-ascend's ``torch.ops._C_ascend.npu_lightning_indexer_quant`` (``csrc/torch_binding.cpp``):
    its keywords and defaults (``layout_key`` "BSND" as its binding; it calls it with TND query,
    PA_BSND key, ``key_dequant_scale = scale_cache.squeeze(2)`` [num_blocks, block_size, 1],
    float16 weights and scales, sparse_count 2048, sparse_mode 3). int8 query / key; weights
    ``[.., N1, 1]`` accepted. Returns the int32 indices only, as the original.
    -> :func:`ascend_ops.lightning_indexer_quant.lightning_indexer_quant`."""
    return _lightning_indexer_quant(_liq_op, query, key, weights, query_dequant_scale, key_dequant_scale,
                                    actual_seq_lengths_query, actual_seq_lengths_key, block_table, query_quant_mode,
                                    key_quant_mode, layout_query, layout_key, sparse_count, sparse_mode)
