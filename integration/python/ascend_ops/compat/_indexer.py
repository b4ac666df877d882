"""The shared translation of the custom_pypto and vllm-ascend lightning indexer call forms."""
from __future__ import annotations


def compress_key_lengths(actual_seq_lengths_key, cmp_ratio, layout_key):
    """vllm-ascend's DeepSeek-V4 convention to ours: its ``actual_seq_lengths_key`` count the
    original (uncompressed) tokens and its kernel divides them by ``cmp_ratio``; our op takes the
    compressed row counts and the original lengths mod ``cmp_ratio`` (``cmp_residual_k``, CANN's
    convention). TND: cumulative ends in both, per batch ``len // r`` summed again.
    Returns (actual_seq_lengths_key, cmp_residual_k); NumPy arrays or torch tensors alike."""
    if actual_seq_lengths_key is None:
        raise ValueError("lightning_indexer: actual_seq_lengths_key is required with cmp_ratio > 1 in vllm-ascend's "
                         "convention (uncompressed key lengths, divided by cmp_ratio)")
    ends = actual_seq_lengths_key
    if layout_key == "TND":
        # per-batch lengths from cumulative ends (ends[b] - ends[b - 1], ends[-1] := 0)
        lengths = ends.clone() if hasattr(ends, "clone") else ends.copy()
        lengths[1:] = ends[1:] - ends[:-1]
        compressed = (lengths // cmp_ratio).cumsum(0).to(ends.dtype) if hasattr(ends, "clone") else \
            (lengths // cmp_ratio).cumsum(0).astype(ends.dtype)
        return compressed, lengths % cmp_ratio
    return ends // cmp_ratio, ends % cmp_ratio


def lightning_indexer(op, query, key, weights, actual_seq_lengths_query, actual_seq_lengths_key, block_table,
                      layout_query, layout_key, sparse_count, sparse_mode, cmp_ratio=1):
    """Their weights may carry a trailing 1 ([B, S1, N1, 1] / [T, N1, 1]); they return only the
    indices. cmp_ratio > 1: vllm-ascend's uncompressed key lengths (compress_key_lengths)."""
    if len(weights.shape) == len(query.shape) and weights.shape[-1] == 1:
        weights = weights.reshape(tuple(weights.shape[:-1]))
    residual = None
    if cmp_ratio != 1:
        if not isinstance(cmp_ratio, int) or cmp_ratio < 1:
            raise ValueError(f"lightning_indexer: cmp_ratio should be in [1, 128] but is {cmp_ratio}")
        actual_seq_lengths_key, residual = compress_key_lengths(actual_seq_lengths_key, cmp_ratio, layout_key)
    indices, _ = op.lightning_indexer(query, key, weights, actual_seq_lengths_query=actual_seq_lengths_query,
                                      actual_seq_lengths_key=actual_seq_lengths_key, block_table=block_table,
                                      cmp_residual_k=residual, layout_query=layout_query, layout_key=layout_key,
                                      sparse_count=sparse_count, sparse_mode=sparse_mode, cmp_ratio=cmp_ratio,
                                      return_value=False)
    return indices
