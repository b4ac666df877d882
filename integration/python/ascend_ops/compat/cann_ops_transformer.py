"""CANN ops-transformer's torch front door (``torch.ops.cann_ops_transformer.*``), translated to
ascend-ops (PyTorch).

``cann_ops_transformer.lightning_indexer`` (``aclnnLightningIndexerV2``, the DeepSeek-V4 indexer
with ``cmp_ratio``) -> :func:`ascend_ops.lightning_indexer.lightning_indexer`.
"""
from __future__ import annotations

from ._require import require_op

__all__ = ["lightning_indexer"]

_op = require_op("ascend_ops.lightning_indexer", "ascend-op-lightning-indexer", __name__)

_LAYOUTS_K = {"BSND": "BSND", "TND": "TND", "PA_BBND": "PA_BSND"}


def _refuse(what: str) -> None:
    raise ValueError(f"lightning_indexer (cann_ops_transformer form): {what} is not supported on Atlas A2 / A3 "
                     "(CANN's LightningIndexerV2 documentation), nor here")


def lightning_indexer(q, k, w, topk, *, cu_seqlens_q=None, cu_seqlens_k=None, seqused_q=None, seqused_k=None,
                      cmp_residual_k=None, block_table=None, output_idx_offset=None, metadata=None, max_seqlen_q=-1,
                      layout_q="BSND", layout_k="BSND", mask_mode=0, cmp_ratio=1, return_value=0):
    """CANN's ``lightning_indexer`` (v2): the top-``topk`` compressed key rows per query token.

    The arguments as CANN names them: ``cu_seqlens_q`` / ``cu_seqlens_k`` are TND cumulative
    lengths of shape (B + 1,) starting at 0 (ours: the B ends, ``cu_seqlens[1:]``); ``seqused_k``
    is each batch's key count (required with ``layout_k="PA_BBND"``, CANN's name of our PA_BSND
    paged cache); ``mask_mode`` is our ``sparse_mode`` (0 or 3); ``cmp_ratio`` and
    ``cmp_residual_k`` are ours, with CANN's convention (key lengths count compressed rows).
    ``metadata`` (a tiling plan A2 / A3 kernels ignore) is ignored. ``seqused_q``,
    ``output_idx_offset`` and ``max_seqlen_q`` are refused (ValueError), as A2 / A3 do not
    support them.

    Returns ``(indices, values)``: int32 indices and float32 values; values is None unless
    ``return_value`` (CANN's documentation does not say what the values output holds then).
    """
    if seqused_q is not None:
        _refuse("seqused_q")
    if output_idx_offset is not None:
        _refuse("output_idx_offset")
    if max_seqlen_q != -1:
        _refuse(f"max_seqlen_q = {max_seqlen_q}")
    if layout_k not in _LAYOUTS_K:
        raise ValueError(f"lightning_indexer (cann_ops_transformer form): layout_k should be 'BSND', 'TND' or "
                         f"'PA_BBND' but is {layout_k!r}")
    lengths_q = cu_seqlens_q[1:] if cu_seqlens_q is not None else None
    if layout_k == "TND":
        lengths_k = cu_seqlens_k[1:] if cu_seqlens_k is not None else None
    else:
        lengths_k = seqused_k
    return _op.lightning_indexer(q, k, w, actual_seq_lengths_query=lengths_q, actual_seq_lengths_key=lengths_k,
                                 block_table=block_table, layout_query=layout_q, layout_key=_LAYOUTS_K[layout_k],
                                 sparse_count=topk, sparse_mode=mask_mode, cmp_ratio=cmp_ratio,
                                 cmp_residual_k=cmp_residual_k, return_value=bool(return_value))
