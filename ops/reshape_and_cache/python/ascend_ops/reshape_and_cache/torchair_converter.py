"""torchair converter of ``torch.ops.ascend_ops.reshape_and_cache`` (GE graph mode).

Imported only where torchair is installed (by :mod:`ascend_ops.reshape_and_cache.torch_ops`);
importing it registers the converter. torchair's max-autotune mode turns each FX node into an
Ascend IR node through its converter; this one maps the op to the Ascend IR op
:data:`GE_OP_TYPE` of the op's CANN custom op package, whose prototype must be::

    REG_OP(ReshapeAndCache)
        .INPUT(key, ...)            // [T, H, Dk]
        .INPUT(value, ...)          // [T, H, Dv]
        .INPUT(key_cache, ...)      // [num_blocks, block_size, H, Dk], updated in place
        .INPUT(value_cache, ...)    // [num_blocks, block_size, H, Dv], updated in place
        .INPUT(slot_mapping, ...)   // [T'] int32 / int64
        .OUTPUT(key_cache, ...)     // ref output: same name as the input it updates
        .OUTPUT(value_cache, ...)

torch.compile functionalizes the in-place op into ``auto_functionalized_v2``; torchair converts
that by moving the caches (TensorMove), calling this converter on the mutable op, and finding
the updated caches through the ref outputs named like their inputs. The op returns nothing, so
the converter returns None.
"""
from __future__ import annotations

from typing import Any, Optional

import torch
import torchair

__all__ = ["GE_OP_TYPE", "convert_reshape_and_cache"]

#: The Ascend IR op type the converter emits.
GE_OP_TYPE = "ReshapeAndCache"


def convert_reshape_and_cache(
    key: Any,  # torchair.ge.Tensor [T, H, Dk]
    value: Any,  # [T, H, Dv]
    key_cache: Any,  # [num_blocks, block_size, H, Dk]
    value_cache: Any,  # [num_blocks, block_size, H, Dv]
    slot_mapping: Any,  # [T']
    cache_mode: int = 0,
    head_num: Optional[int] = None,
    meta_outputs: Optional[Any] = None,
) -> None:
    """Emit one ``ReshapeAndCache`` node writing key_cache and value_cache in place.

    The GE prototype above has the five-tensor ND form only: a key-only call, cache_mode 1 or a
    head_num is refused here (not silently dropped). Not run here: torchair is not installed.
    """
    if value is None or value_cache is None or cache_mode != 0 or head_num is not None:
        raise NotImplementedError(
            "reshape_and_cache: the torchair converter supports the ND key+value form only "
            f"(value and value_cache given, cache_mode 0, no head_num); got cache_mode={cache_mode}, "
            f"head_num={head_num}, value {'None' if value is None else 'given'}")
    torchair.ge.custom_op(
        GE_OP_TYPE,
        inputs={
            "key": key,
            "value": value,
            "key_cache": key_cache,
            "value_cache": value_cache,
            "slot_mapping": slot_mapping,
        },
        outputs=["key_cache", "value_cache"],
    )
    return None


torchair.register_fx_node_ge_converter(torch.ops.ascend_ops.reshape_and_cache.default)(
    convert_reshape_and_cache
)
