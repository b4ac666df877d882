"""torchair (GE graph mode) converter of ``torch.ops.ascend_ops.lightning_indexer_quant``: common's
(``ascend_ops.common.torchair.register_ge_converter``, from the op's description), registered on
import, where torchair is installed. It emits the GE op :data:`GE_OP_TYPE` of the op's CANN
custom op package (none exists yet: the AscendC kernel has not landed), whose prototype must be::

    REG_OP(LightningIndexerQuant)
        .INPUT(query, ...)                           // int8 [B, S1, N1, D] | [T1, N1, D]
        .INPUT(key, ...)                             // int8 [num_blocks, block_size, N2, D] | [B, S2, N2, D] | [T2, N2, D]
        .INPUT(weights, ...)                         // [B, S1, N1] | [T1, N1]
        .INPUT(query_dequant_scale, ...)             // [B, S1, N1] | [T1, N1]
        .INPUT(key_dequant_scale, ...)               // key without D (PA_BSND: also [.., N2, 1])
        .OPTIONAL_INPUT(actual_seq_lengths_query, ...)  // [B]
        .OPTIONAL_INPUT(actual_seq_lengths_key, ...)    // [B]
        .OPTIONAL_INPUT(block_table, ...)               // [B, max_blocks]
        .OUTPUT(sparse_indices, ...)                 // int32 [B, S1, N2, K] | [T1, N2, K]
        .OUTPUT(sparse_values, ...)                  // float32, same shape
        .ATTR(query_quant_mode, Int, 0)
        .ATTR(key_quant_mode, Int, 0)
        .ATTR(layout_query, String, "BSND")
        .ATTR(layout_key, String, "PA_BSND")
        .ATTR(sparse_count, Int, 2048)
        .ATTR(sparse_mode, Int, 3)
        .ATTR(return_value, Bool, false)

(vllm-ascend's LightningIndexerQuant has the same inputs and attributes but return_value, and the
one output sparse_indices.) The op mutates nothing. An absent optional tensor is passed as None;
when return_value is false the converter returns None for sparse_values, as the op's schema.
"""
from ascend_ops.common.torchair import register_ge_converter

__all__ = ["GE_OP_TYPE", "convert_lightning_indexer_quant"]

#: The Ascend IR op type the converter emits.
GE_OP_TYPE = "LightningIndexerQuant"

convert_lightning_indexer_quant = register_ge_converter(__package__, GE_OP_TYPE)
