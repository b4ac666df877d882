"""The shared translation of the custom_pypto and vllm-ascend lightning indexer call forms."""
from __future__ import annotations


def lightning_indexer(op, query, key, weights, actual_seq_lengths_query, actual_seq_lengths_key, block_table,
                      layout_query, layout_key, sparse_count, sparse_mode):
    """Their weights may carry a trailing 1 ([B, S1, N1, 1] / [T, N1, 1]); they return only the
    indices."""
    if len(weights.shape) == len(query.shape) and weights.shape[-1] == 1:
        weights = weights.reshape(tuple(weights.shape[:-1]))
    indices, _ = op.lightning_indexer(query, key, weights, actual_seq_lengths_query=actual_seq_lengths_query,
                                      actual_seq_lengths_key=actual_seq_lengths_key, block_table=block_table,
                                      layout_query=layout_query, layout_key=layout_key, sparse_count=sparse_count,
                                      sparse_mode=sparse_mode, return_value=False)
    return indices
