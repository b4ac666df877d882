"""The op's entry in the ``ascend_ops.ops`` group: cheap to import, no native code."""
from ascend_ops.common.registry import OpInfo

OP = OpInfo(
    name="sparse_flash_attention",
    package="ascend-op-sparse-flash-attention",
    checks="ascend_ops.sparse_flash_attention._check:cases",
)
