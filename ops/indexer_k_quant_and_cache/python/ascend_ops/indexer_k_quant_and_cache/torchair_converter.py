"""torchair (GE graph mode) converter of ``torch.ops.ascend_ops.indexer_k_quant_and_cache``: common's
(``ascend_ops.common.torchair.register_ge_converter``, from the op's description), registered on
import, where torchair is installed. It emits the GE op :data:`GE_OP_TYPE` of the op's CANN custom
op package (CANN's own ``IndexerQuantCache`` is Atlas 950 only and has other modes), whose
prototype must be::

    REG_OP(IndexerKQuantAndCache)
        .INPUT(k, ...)                       // [T, D]
        .INPUT(k_cache, ...)                 // updated in place
        .INPUT(slot_mapping, ...)            // [T'] int32 / int64
        .OPTIONAL_INPUT(k_scale_cache, ...)  // split layout: updated in place
        .OUTPUT(k_cache, ...)                // ref outputs: same names as the inputs they update
        .OUTPUT(k_scale_cache, ...)
        .ATTR(quant_block_size, Int, 128)
        .ATTR(scale_fmt, String, "")

The op returns nothing, so the converter returns None.
"""
from ascend_ops.common.torchair import register_ge_converter

__all__ = ["GE_OP_TYPE", "convert_indexer_k_quant_and_cache"]

#: The Ascend IR op type the converter emits.
GE_OP_TYPE = "IndexerKQuantAndCache"

convert_indexer_k_quant_and_cache = register_ge_converter(__package__, GE_OP_TYPE)
