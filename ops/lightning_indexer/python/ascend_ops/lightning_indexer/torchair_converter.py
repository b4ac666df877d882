"""torchair converter of ``torch.ops.ascend_ops.lightning_indexer`` (GE graph mode).

Imported only where torchair is installed (by :mod:`ascend_ops.lightning_indexer.torch_ops`);
importing it registers the converter with ``torchair.register_fx_node_ge_converter`` (torchair's
documented entry). torchair's max-autotune mode turns each FX node into an Ascend IR node
through its converter; this one maps the op to the Ascend IR op :data:`GE_OP_TYPE` of the op's
CANN custom op package, whose prototype must be::

    REG_OP(LightningIndexer)
        .INPUT(query, ...)                           // [B, S1, N1, D] | [T1, N1, D]
        .INPUT(key, ...)                             // [num_blocks, block_size, N2, D] | [B, S2, N2, D] | [T2, N2, D]
        .INPUT(weights, ...)                         // [B, S1, N1] | [T1, N1]
        .OPTIONAL_INPUT(actual_seq_lengths_query, ...)  // [B]
        .OPTIONAL_INPUT(actual_seq_lengths_key, ...)    // [B]
        .OPTIONAL_INPUT(block_table, ...)               // [B, max_blocks]
        .OUTPUT(sparse_indices, ...)                 // int32 [B, S1, N2, K] | [T1, N2, K]
        .OUTPUT(sparse_values, ...)                  // float32, same shape
        .ATTR(layout_query, String, "BSND")
        .ATTR(layout_key, String, "PA_BSND")
        .ATTR(sparse_count, Int, 2048)
        .ATTR(sparse_mode, Int, 3)
        .ATTR(return_value, Bool, false)

(vllm-ascend's LightningIndexer has the same inputs and attributes and the one output
sparse_indices; ours adds sparse_values and return_value.) The op mutates nothing: no ref
outputs. An absent optional tensor is passed as None (an unconnected optional input). When
return_value is false the GE node still has its sparse_values output, but the converter returns
None in its place, matching the op's schema ``-> (Tensor sparse_indices, Tensor? sparse_values)``.
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

import torch
import torchair

__all__ = ["GE_OP_TYPE", "OUTPUTS", "convert_lightning_indexer"]

#: The Ascend IR op type the converter emits.
GE_OP_TYPE = "LightningIndexer"
#: The GE node's outputs, in order.
OUTPUTS = ["sparse_indices", "sparse_values"]


def convert_lightning_indexer(
    query: Any,  # torchair.ge.Tensor [B, S1, N1, D] | [T1, N1, D]
    key: Any,  # [num_blocks, block_size, N2, D] | [B, S2, N2, D] | [T2, N2, D]
    weights: Any,  # [B, S1, N1] | [T1, N1]
    *,
    actual_seq_lengths_query: Optional[Any] = None,  # [B]
    actual_seq_lengths_key: Optional[Any] = None,  # [B]
    block_table: Optional[Any] = None,  # [B, max_blocks]
    layout_query: str = "BSND",
    layout_key: str = "PA_BSND",
    sparse_count: int = 2048,
    sparse_mode: int = 3,
    return_value: bool = False,
    meta_outputs: Optional[Any] = None,
) -> Tuple[Any, Optional[Any]]:
    """Emit one ``LightningIndexer`` node; return (sparse_indices, sparse_values or None)."""
    indices, values = torchair.ge.custom_op(
        GE_OP_TYPE,
        inputs={
            "query": query,
            "key": key,
            "weights": weights,
            "actual_seq_lengths_query": actual_seq_lengths_query,
            "actual_seq_lengths_key": actual_seq_lengths_key,
            "block_table": block_table,
        },
        outputs=list(OUTPUTS),
        attrs={
            "layout_query": torchair.ge.attr.Str(layout_query),
            "layout_key": torchair.ge.attr.Str(layout_key),
            "sparse_count": torchair.ge.attr.Int(sparse_count),
            "sparse_mode": torchair.ge.attr.Int(sparse_mode),
            "return_value": torchair.ge.attr.Bool(return_value),
        },
    )
    return indices, (values if return_value else None)


torchair.register_fx_node_ge_converter(torch.ops.ascend_ops.lightning_indexer.default)(convert_lightning_indexer)
