"""vllm-ascend / torch_npu call forms (``torch.ops.custom.npu_lightning_indexer``), translated to
ascend-ops (PyTorch)."""
from __future__ import annotations

from ._indexer import lightning_indexer as _lightning_indexer
from ._require import require_op

_op = require_op("ascend_ops.lightning_indexer", "ascend-op-lightning-indexer", __name__)

__all__ = ["npu_lightning_indexer"]


def npu_lightning_indexer(query, key, weights, *, actual_seq_lengths_query=None, actual_seq_lengths_key=None,
                          block_table=None, layout_query="BSND", layout_key="PA_BSND", sparse_count=2048,
                          sparse_mode=3, cmp_ratio=1):
    """vllm-ascend's ``npu_lightning_indexer``: the top-``sparse_count`` key positions per query token.
    Same keywords and defaults (query / key / weights positional or by keyword, the rest
    keyword-only); TND ``actual_seq_lengths_query`` are cumulative ends, as documented there.
    Returns the int32 indices only, as the original.

    ``cmp_ratio`` (DeepSeek-V4's compressed keys) takes vllm-ascend's V4 convention (its
    ``npu_vllm_quant_lightning_indexer``): ``key`` holds compressed rows but
    ``actual_seq_lengths_key`` counts the original tokens, which this entry divides:
    ``actual_seq_lengths_key // cmp_ratio`` compressed rows, ``cmp_residual_k =
    actual_seq_lengths_key % cmp_ratio`` (per batch; TND: of the differences of the ends).
    -> :func:`ascend_ops.lightning_indexer.lightning_indexer`."""
    return _lightning_indexer(_op, query, key, weights,
                              actual_seq_lengths_query, actual_seq_lengths_key, block_table, layout_query,
                              layout_key, sparse_count, sparse_mode, cmp_ratio)
