"""adv_step_flash's MindSpore front door on Ascend: ms.advance_step_flashattn picks the generated
graph primitive (its op yaml generated from the description) from the build info, or raises a
RuntimeError naming the op and why. No NPU here: device_target and the build info are faked
(the generated primitive is a recorder); the kernel itself is only compile-checked
(tests/test_ms_ascend_compile.py), not run on NPU.
"""
from __future__ import annotations

import numpy as np
import pytest

ms = pytest.importorskip("mindspore", reason="mindspore is not installed")  # before the adapter
from mindspore import Parameter, Tensor, nn  # noqa: E402

import ascend_ops.adv_step_flash._build_info as info  # noqa: E402
from ascend_ops.common import ms_ascend_testing as fake  # noqa: E402
from ascend_ops.common.ms_ascend_testing import on_ascend  # noqa: E402,F401  (a fixture)
from ascend_ops.adv_step_flash import ms as op_ms  # noqa: E402


def inputs():
    ints = lambda *v: Tensor(np.array(v, np.int32))  # noqa: E731
    return (2, 1, 4, Parameter(ints(0, 0), name="tokens"), ints(7), Parameter(ints(0, 0), name="positions"),
            Parameter(ints(3, 0), name="seq_lens"), Parameter(ints(0, 0), name="slots"), ints(0, 1, 2, 3))


def test_not_built_raises_naming_the_op_and_why(on_ascend, monkeypatch):
    fake.fake_not_built(monkeypatch, info)
    with pytest.raises(RuntimeError, match=r"^adv_step_flash: MindSpore's device_target is 'Ascend'.*"
                                           r"ascend-op-adv-step-flash.*CANN was not found"):
        op_ms.advance_step_flashattn(*inputs())


def test_not_built_raises_when_a_graph_is_compiled(on_ascend, monkeypatch):
    fake.fake_not_built(monkeypatch, info)
    ms.set_context(mode=ms.GRAPH_MODE)
    n, q, b, *tensors = inputs()

    class Cell(nn.Cell):
        def construct(self, tokens, sampled, positions, seq_lens, slots, tables):
            return op_ms.advance_step_flashattn(n, q, b, tokens, sampled, positions, seq_lens, slots, tables)

    with pytest.raises(RuntimeError, match="adv_step_flash: MindSpore's device_target is 'Ascend'"):
        Cell()(*tensors)


def test_built_calls_the_generated_primitive_with_the_yaml_inputs(on_ascend, monkeypatch):
    calls = fake.fake_generated_primitive(monkeypatch, info, "adv_step_flash", "out")
    args = inputs()
    assert op_ms.advance_step_flashattn(*args) == "out"
    names = fake.yaml_arg_names(__file__, "adv_step_flash")
    assert len(names) == len(args) + 1 and names[-1] == "present" and calls == [args + (0,)]


def test_the_eager_function_the_generated_primitive_imports_exists():
    assert callable(op_ms.adv_step_flash_npu)  # gen_custom_ops.py -m ascend_ops.adv_step_flash.ms
