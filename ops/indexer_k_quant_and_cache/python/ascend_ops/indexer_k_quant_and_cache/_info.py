"""The op's entry in the ``ascend_ops.ops`` group: cheap to import, no native code."""
from ascend_ops.common.registry import OpInfo

OP = OpInfo(
    name="indexer_k_quant_and_cache",
    package="ascend-op-indexer-k-quant-and-cache",
    checks="ascend_ops.indexer_k_quant_and_cache._check:cases",
)
