"""The op's entry in the ``ascend_ops.ops`` group: cheap to import, no native code."""
from ascend_ops.common.registry import OpInfo

OP = OpInfo(
    name="lightning_indexer_quant",
    package="ascend-op-lightning-indexer",
    checks="ascend_ops.lightning_indexer_quant._check:cases",
)
