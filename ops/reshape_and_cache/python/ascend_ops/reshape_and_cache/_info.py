"""The op's entry in the ``ascend_ops.ops`` group: cheap to import, no native code."""
from ascend_ops.common.registry import OpInfo

OP = OpInfo(
    name="reshape_and_cache",
    package="ascend-op-reshape-and-cache",
    checks="ascend_ops.reshape_and_cache._check:cases",
)
