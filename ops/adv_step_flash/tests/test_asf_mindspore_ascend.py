"""adv_step_flash's MindSpore front door on Ascend: ms.advance_step_flashattn picks the generated
graph primitive (mindspore/ascend/adv_step_flash_op.yaml) from the build info, or raises a
RuntimeError naming the op and why. No NPU here: device_target and the build info are faked
(the generated primitive is a recorder); the kernel itself is only compile-checked
(tests/test_ms_ascend_compile.py), not run on NPU.
"""
from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
import pytest
import yaml

ms = pytest.importorskip("mindspore", reason="mindspore is not installed")  # before the adapter
from mindspore import Parameter, Tensor, nn  # noqa: E402

import ascend_ops.adv_step_flash._build_info as info  # noqa: E402
from ascend_ops.common import ms_graph  # noqa: E402
from ascend_ops.adv_step_flash import ms as op_ms  # noqa: E402

YAML = Path(__file__).resolve().parent.parent / "mindspore" / "ascend" / "adv_step_flash_op.yaml"


@pytest.fixture
def on_ascend(monkeypatch):
    monkeypatch.setattr(ms_graph, "device_target", lambda: "Ascend")
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


def inputs():
    ints = lambda *v: Tensor(np.array(v, np.int32))  # noqa: E731
    return (2, 1, 4, Parameter(ints(0, 0), name="tokens"), ints(7), Parameter(ints(0, 0), name="positions"),
            Parameter(ints(3, 0), name="seq_lens"), Parameter(ints(0, 0), name="slots"), ints(0, 1, 2, 3))


def not_built(monkeypatch):
    monkeypatch.setattr(info, "FRAMEWORKS", {**info.FRAMEWORKS, "mindspore_ascend": False})
    monkeypatch.setattr(info, "NOT_BUILT_WHY", {"mindspore_ascend": "CANN was not found when the op was built"})


def test_not_built_raises_naming_the_op_and_why(on_ascend, monkeypatch):
    not_built(monkeypatch)
    with pytest.raises(RuntimeError, match=r"^adv_step_flash: MindSpore's device_target is 'Ascend'.*"
                                           r"ascend-op-adv-step-flash.*CANN was not found"):
        op_ms.advance_step_flashattn(*inputs())


def test_not_built_raises_when_a_graph_is_compiled(on_ascend, monkeypatch):
    not_built(monkeypatch)
    ms.set_context(mode=ms.GRAPH_MODE)
    n, q, b, *tensors = inputs()

    class Cell(nn.Cell):
        def construct(self, tokens, sampled, positions, seq_lens, slots, tables):
            return op_ms.advance_step_flashattn(n, q, b, tokens, sampled, positions, seq_lens, slots, tables)

    with pytest.raises(RuntimeError, match="adv_step_flash: MindSpore's device_target is 'Ascend'"):
        Cell()(*tensors)


def test_built_calls_the_generated_primitive_with_the_yaml_inputs(on_ascend, monkeypatch):
    calls = []
    generated = types.ModuleType("ascend_ops.adv_step_flash._ms_graph")
    generated.adv_step_flash_npu_op = lambda *args: calls.append(args) or "out"
    monkeypatch.setitem(sys.modules, generated.__name__, generated)
    monkeypatch.setattr(info, "FRAMEWORKS", {**info.FRAMEWORKS, "mindspore_ascend": True})
    args = inputs()
    assert op_ms.advance_step_flashattn(*args) == "out"
    names = list(yaml.safe_load(YAML.read_text())["adv_step_flash_npu"]["args"])
    assert len(names) == len(args) and calls == [args]


def test_the_eager_function_the_generated_primitive_imports_exists():
    assert callable(op_ms.adv_step_flash_npu)  # gen_custom_ops.py -m ascend_ops.adv_step_flash.ms
