"""The op's entry in the ``ascend_ops.ops`` group: cheap to import, no native code."""
from ascend_ops.common.registry import OpInfo

OP = OpInfo(
    name="adv_step_flash",
    package="ascend-op-adv-step-flash",
    checks="ascend_ops.adv_step_flash._check:cases",
)
