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


NO_LIMIT = 9223372036854775807  # 2**63 - 1: torch_npu's pre_tokens / next_tokens default, the only value it takes


def lightning_indexer(op, query, key, weights, actual_seq_lengths_query, actual_seq_lengths_key, block_table,
                      layout_query, layout_key, sparse_count, sparse_mode, cmp_ratio=1, return_value=False):
    """The op's (sparse_indices, sparse_values or None); weights with a trailing 1 go to the op as
    they are (it takes them). cmp_ratio > 1: vllm-ascend's uncompressed key lengths
    (compress_key_lengths)."""
    residual = None
    if cmp_ratio != 1:
        if not isinstance(cmp_ratio, int) or cmp_ratio < 1:
            raise ValueError(f"lightning_indexer: cmp_ratio should be in [1, 128] but is {cmp_ratio}")
        actual_seq_lengths_key, residual = compress_key_lengths(actual_seq_lengths_key, cmp_ratio, layout_key)
    return op.lightning_indexer(query, key, weights, actual_seq_lengths_query=actual_seq_lengths_query,
                                actual_seq_lengths_key=actual_seq_lengths_key, block_table=block_table,
                                cmp_residual_k=residual, layout_query=layout_query, layout_key=layout_key,
                                sparse_count=sparse_count, sparse_mode=sparse_mode, cmp_ratio=cmp_ratio,
                                return_value=return_value)


def npu_lightning_indexer_pair(op, name, query, key, weights, actual_seq_lengths_query, actual_seq_lengths_key,
                               block_table, layout_query, layout_key, sparse_count, sparse_mode, pre_tokens,
                               next_tokens, return_value, cmp_ratio=1):
    """torch_npu's / vllm-ascend's current form: ``(sparse_indices, sparse_values)``, the values in
    query's dtype (op-plugin allocates them so), an empty [0] tensor of query's dtype unless
    ``return_value``. pre_tokens / next_tokens: only 2**63 - 1, as documented there."""
    for arg, value in (("pre_tokens", pre_tokens), ("next_tokens", next_tokens)):
        if value != NO_LIMIT:
            raise ValueError(f"{name}: {arg} should be {NO_LIMIT} (2**63 - 1, the only value torch_npu and "
                             f"vllm-ascend support) but is {value}")
    indices, values = lightning_indexer(op, query, key, weights, actual_seq_lengths_query, actual_seq_lengths_key,
                                        block_table, layout_query, layout_key, sparse_count, sparse_mode, cmp_ratio,
                                        bool(return_value))
    if values is None:
        return indices, query.new_empty((0,))
    return indices, values.to(query.dtype)
