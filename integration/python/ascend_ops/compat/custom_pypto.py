"""custom_pypto's call forms (``torch.ops.custom_pypto.*``), translated to ascend-ops (PyTorch)."""
from __future__ import annotations

from ._indexer import lightning_indexer as _lightning_indexer
from ._require import require_op

_op = require_op("ascend_ops.lightning_indexer", "ascend-op-lightning-indexer", __name__)

__all__ = ["npu_lightning_indexer_pto"]


def npu_lightning_indexer_pto(query, key, weights, *, actual_seq_lengths_query=None, actual_seq_lengths_key=None,
                              block_table=None, layout_query="BSND", layout_key="PA_BSND", sparse_count=2048,
                              sparse_mode=3):
    """custom_pypto's ``torch.ops.custom_pypto.npu_lightning_indexer_pto``: the top-``sparse_count``
    key positions per query token. Same positional / keyword-only split, keywords and defaults; weights may be
    ``[B, S1, N1]`` or with a trailing 1. Returns the int32 indices only, as the original.
    -> :func:`ascend_ops.lightning_indexer.lightning_indexer`."""
    return _lightning_indexer(_op, query, key, weights,
                              actual_seq_lengths_query, actual_seq_lengths_key, block_table, layout_query,
                              layout_key, sparse_count, sparse_mode)[0]
