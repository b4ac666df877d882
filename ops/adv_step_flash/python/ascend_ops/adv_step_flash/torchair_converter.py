"""torchair converter of ``torch.ops.ascend_ops.advance_step_flashattn`` (GE graph mode).

Imported only where torchair is installed (by :mod:`ascend_ops.adv_step_flash.torch_ops`);
importing it registers the converter. torchair's max-autotune mode turns each FX node into an
Ascend IR node through its converter; this one maps the op to the Ascend IR op
:data:`GE_OP_TYPE` of the op's CANN custom op package, whose prototype must be::

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
from __future__ import annotations

from typing import Any, Optional

import torch
import torchair

__all__ = ["GE_OP_TYPE", "convert_advance_step_flashattn"]

#: The Ascend IR op type the converter emits.
GE_OP_TYPE = "AdvanceStepFlashattn"
#: The outputs the op updates in place, in schema order.
REF_OUTPUTS = ["input_tokens", "input_positions", "seq_lens", "slot_mapping"]


def convert_advance_step_flashattn(
    num_seqs: int,
    num_queries: int,
    block_size: int,
    input_tokens: Any,  # torchair.ge.Tensor [num_seqs]
    sampled_token_ids: Any,  # [num_queries(, 1)]
    input_positions: Any,  # [num_seqs]
    seq_lens: Any,  # [num_seqs]
    slot_mapping: Any,  # [num_seqs]
    block_tables: Any,  # [num_seqs, max_blocks_per_seq]
    meta_outputs: Optional[Any] = None,
) -> None:
    """Emit one ``AdvanceStepFlashattn`` node writing the four outputs in place."""
    torchair.ge.custom_op(
        GE_OP_TYPE,
        inputs={
            "input_tokens": input_tokens,
            "sampled_token_ids": sampled_token_ids,
            "input_positions": input_positions,
            "seq_lens": seq_lens,
            "slot_mapping": slot_mapping,
            "block_tables": block_tables,
        },
        outputs=list(REF_OUTPUTS),
        attrs={
            "num_seqs": torchair.ge.attr.Int(num_seqs),
            "num_queries": torchair.ge.attr.Int(num_queries),
            "block_size": torchair.ge.attr.Int(block_size),
        },
    )
    return None


torchair.register_fx_node_ge_converter(torch.ops.ascend_ops.advance_step_flashattn.default)(
    convert_advance_step_flashattn
)
