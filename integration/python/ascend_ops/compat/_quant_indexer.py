"""The shared translation of the vllm-ascend and torch_npu quantised lightning indexer call forms."""
from __future__ import annotations


def lightning_indexer_quant(op, query, key, weights, query_dequant_scale, key_dequant_scale,
                            actual_seq_lengths_query, actual_seq_lengths_key, block_table, query_quant_mode,
                            key_quant_mode, layout_query, layout_key, sparse_count, sparse_mode):
    """Their weights may carry a trailing 1 ([B, S1, N1, 1] / [T, N1, 1]); they return only the
    indices. -> :func:`ascend_ops.lightning_indexer_quant.lightning_indexer_quant`."""
    if len(weights.shape) == len(query.shape) and weights.shape[-1] == 1:
        weights = weights.reshape(tuple(weights.shape[:-1]))
    indices, _ = op.lightning_indexer_quant(
        query, key, weights, query_dequant_scale, key_dequant_scale,
        actual_seq_lengths_query=actual_seq_lengths_query, actual_seq_lengths_key=actual_seq_lengths_key,
        block_table=block_table, query_quant_mode=query_quant_mode, key_quant_mode=key_quant_mode,
        layout_query=layout_query, layout_key=layout_key, sparse_count=sparse_count, sparse_mode=sparse_mode,
        return_value=False)
    return indices
