"""torchair (GE graph mode) converter of ``torch.ops.ascend_ops.reshape_and_cache``: common's
(``ascend_ops.common.torchair.register_ge_converter``, from the op's description), registered on
import, where torchair is installed. It emits the GE op :data:`GE_OP_TYPE` of the op's CANN
custom op package, whose prototype must be::

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
from ascend_ops.common.torchair import register_ge_converter

__all__ = ["GE_OP_TYPE", "convert_reshape_and_cache"]

#: The Ascend IR op type the converter emits.
GE_OP_TYPE = "ReshapeAndCache"


def _nd_key_value_only(values: dict) -> None:
    """The GE prototype has the five-tensor ND form only: a key-only call, cache_mode 1, a
    head_num or a quantising kv_cache_dtype is refused here (not silently dropped). Scales with
    "auto" are the op's own ValueError, raised by its Meta kernel while tracing."""
    if values["kv_cache_dtype"] != "auto":
        raise NotImplementedError(
            "reshape_and_cache: the torchair converter supports kv_cache_dtype='auto' only (the GE prototype "
            f"has no scales); got kv_cache_dtype={values['kv_cache_dtype']!r}")
    if values["value"] is None or values["value_cache"] is None or values["cache_mode"] != 0 or \
            values["head_num"] is not None:
        raise NotImplementedError(
            "reshape_and_cache: the torchair converter supports the ND key+value form only "
            f"(value and value_cache given, cache_mode 0, no head_num); got cache_mode={values['cache_mode']}, "
            f"head_num={values['head_num']}, value {'None' if values['value'] is None else 'given'}")


convert_reshape_and_cache = register_ge_converter(__package__, GE_OP_TYPE, attrs=(), check=_nd_key_value_only)
