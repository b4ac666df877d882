"""The shared translation of the torch_npu / vllm-ascend ``npu_sparse_flash_attention`` call forms."""
from __future__ import annotations


def npu_sparse_flash_attention(op, query, key, value, sparse_indices, scale_value, block_table,
                               actual_seq_lengths_query, actual_seq_lengths_kv, query_rope, key_rope,
                               sparse_block_size, layout_query, layout_kv, sparse_mode, pre_tokens, next_tokens,
                               attention_mode, return_softmax_lse):
    """Both return three tensors; without ``return_softmax_lse`` softmax_max and softmax_sum are
    empty float32 tensors of shape [0] (``at::empty({0})`` in both adapters), where our op returns
    None."""
    out, softmax_max, softmax_sum = op.sparse_flash_attention(
        query, key, value, sparse_indices, scale_value, block_table=block_table,
        actual_seq_lengths_query=actual_seq_lengths_query, actual_seq_lengths_kv=actual_seq_lengths_kv,
        query_rope=query_rope, key_rope=key_rope, sparse_block_size=sparse_block_size, layout_query=layout_query,
        layout_kv=layout_kv, sparse_mode=sparse_mode, pre_tokens=pre_tokens, next_tokens=next_tokens,
        attention_mode=attention_mode, return_softmax_lse=return_softmax_lse)
    if softmax_max is None:
        softmax_max = out.new_empty((0,)).float()
        softmax_sum = out.new_empty((0,)).float()
    return out, softmax_max, softmax_sum
