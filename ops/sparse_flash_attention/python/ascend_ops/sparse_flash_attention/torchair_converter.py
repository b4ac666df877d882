"""torchair (GE graph mode) converter of ``torch.ops.ascend_ops.sparse_flash_attention``: common's
(``ascend_ops.common.torchair.register_ge_converter``, from the op's description), registered on
import, where torchair is installed. It emits the GE op :data:`GE_OP_TYPE`, CANN's
``SparseFlashAttention`` (ops-transformer), whose prototype has these inputs and attributes::

    .INPUT(query) .INPUT(key) .INPUT(value) .INPUT(sparse_indices)
    .OPTIONAL_INPUT(block_table) .OPTIONAL_INPUT(actual_seq_lengths_query)
    .OPTIONAL_INPUT(actual_seq_lengths_kv) .OPTIONAL_INPUT(query_rope) .OPTIONAL_INPUT(key_rope)
    .OUTPUT(attention_out) .OUTPUT(softmax_max) .OUTPUT(softmax_sum)
    .REQUIRED_ATTR(scale_value, Float) .ATTR(sparse_block_size, Int, 1)
    .ATTR(layout_query, String, "BSND") .ATTR(layout_kv, String, "BSND") .ATTR(sparse_mode, Int, 3)
    .ATTR(pre_tokens, Int, INT64_MAX) .ATTR(next_tokens, Int, INT64_MAX)
    .ATTR(attention_mode, Int, 0) .ATTR(return_softmax_lse, Bool, false)

Our converter passes every attribute explicitly, so the prototype's defaults (layout_kv "BSND",
attention_mode 0) never apply. The op mutates nothing; with return_softmax_lse false the node
still has the two lse outputs and the converter returns None in their place, matching the
schema ``-> (Tensor attention_out, Tensor? softmax_max, Tensor? softmax_sum)``.
"""
from ascend_ops.common.torchair import register_ge_converter

__all__ = ["GE_OP_TYPE", "convert_sparse_flash_attention"]

#: The Ascend IR op type the converter emits.
GE_OP_TYPE = "SparseFlashAttention"

convert_sparse_flash_attention = register_ge_converter(__package__, GE_OP_TYPE)
