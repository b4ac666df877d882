"""torchair (GE graph mode) converter of ``torch.ops.ascend_ops.advance_step_flashattn``: common's
(``ascend_ops.common.torchair.register_ge_converter``, from the op's description), registered on
import, where torchair is installed. It emits the GE op :data:`GE_OP_TYPE` of the op's CANN
custom op package, whose prototype must be::

    REG_OP(AdvanceStepFlashattn)
        .INPUT(input_tokens, ...)       // [num_seqs], updated in place
        .INPUT(sampled_token_ids, ...)  // [num_queries(, 1)]
        .INPUT(input_positions, ...)    // [num_seqs], updated in place
        .INPUT(seq_lens, ...)           // [num_seqs], updated in place
        .INPUT(slot_mapping, ...)       // [num_seqs], updated in place
        .INPUT(block_tables, ...)       // [num_seqs, max_blocks_per_seq]
        .OUTPUT(input_tokens, ...)      // ref outputs: same names as the inputs they update
        .OUTPUT(input_positions, ...)
        .OUTPUT(seq_lens, ...)
        .OUTPUT(slot_mapping, ...)
        .REQUIRED_ATTR(num_seqs, Int)
        .REQUIRED_ATTR(num_queries, Int)
        .REQUIRED_ATTR(block_size, Int)

torch.compile functionalizes the in-place op into ``auto_functionalized_v2``; torchair converts
that by moving the outputs (TensorMove), calling this converter on the mutable op, and finding
the updated tensors through the ref outputs named like their inputs. The op returns nothing,
so the converter returns None.
"""
from ascend_ops.common.torchair import register_ge_converter

__all__ = ["GE_OP_TYPE", "convert_advance_step_flashattn"]

#: The Ascend IR op type the converter emits.
GE_OP_TYPE = "AdvanceStepFlashattn"

convert_advance_step_flashattn = register_ge_converter(__package__, GE_OP_TYPE)
