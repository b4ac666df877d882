"""torchair (GE graph mode) converter of ``torch.ops.ascend_ops.lightning_indexer``: common's
(``ascend_ops.common.torchair.register_ge_converter``, from the op's description), registered on
import, where torchair is installed. It emits the GE op :data:`GE_OP_TYPE` of the op's CANN
custom op package, whose prototype must be::

    REG_OP(LightningIndexer)
        .INPUT(query, ...)                           // [B, S1, N1, D] | [T1, N1, D]
        .INPUT(key, ...)                             // [num_blocks, block_size, N2, D] | [B, S2, N2, D] | [T2, N2, D]
        .INPUT(weights, ...)                         // [B, S1, N1] | [T1, N1]
        .OPTIONAL_INPUT(actual_seq_lengths_query, ...)  // [B]
        .OPTIONAL_INPUT(actual_seq_lengths_key, ...)    // [B]
        .OPTIONAL_INPUT(block_table, ...)               // [B, max_blocks]
        .OPTIONAL_INPUT(cmp_residual_k, ...)            // [B]
        .OUTPUT(sparse_indices, ...)                 // int32 [B, S1, N2, K] | [T1, N2, K]
        .OUTPUT(sparse_values, ...)                  // float32, same shape
        .ATTR(layout_query, String, "BSND")
        .ATTR(layout_key, String, "PA_BSND")
        .ATTR(sparse_count, Int, 2048)
        .ATTR(sparse_mode, Int, 3)
        .ATTR(cmp_ratio, Int, 1)
        .ATTR(return_value, Bool, false)

(vllm-ascend's LightningIndexer has the same inputs and attributes and the one output
sparse_indices; ours adds sparse_values and return_value, and cmp_residual_k / cmp_ratio,
DeepSeek-V4's compressed keys.) The op mutates nothing: no ref
outputs. An absent optional tensor is passed as None (an unconnected optional input). When
return_value is false the GE node still has its sparse_values output, but the converter returns
None in its place, matching the op's schema ``-> (Tensor sparse_indices, Tensor? sparse_values)``.
"""
from ascend_ops.common.torchair import register_ge_converter

__all__ = ["GE_OP_TYPE", "convert_lightning_indexer"]

#: The Ascend IR op type the converter emits.
GE_OP_TYPE = "LightningIndexer"

convert_lightning_indexer = register_ge_converter(__package__, GE_OP_TYPE)
