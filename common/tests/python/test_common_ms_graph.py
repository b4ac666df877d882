"""ascend_ops.common.ms_graph: which primitive an op's ms.py calls on Ascend, from its build info.

No NPU here: device_target and the build info are faked; the generated module is a stand-in.
"""
from __future__ import annotations

import sys
import types

import pytest

ms = pytest.importorskip("mindspore", reason="mindspore is not installed")
from ascend_ops.common import ms_graph  # noqa: E402


def fake_op(monkeypatch, built: bool, why: str = "") -> types.ModuleType:
    info = types.ModuleType("ascend_ops.fake_op._build_info")
    info.FRAMEWORKS = {"mindspore": True, "mindspore_ascend": built}
    info.NOT_BUILT_WHY = {"mindspore_ascend": why}
    generated = types.ModuleType("ascend_ops.fake_op._ms_graph")
    generated.fake_npu_op = object()
    monkeypatch.setitem(sys.modules, "ascend_ops.fake_op._build_info", info)
    monkeypatch.setitem(sys.modules, "ascend_ops.fake_op._ms_graph", generated)
    return generated


def test_on_ascend_follows_device_target(monkeypatch):
    assert ms_graph.on_ascend() is (ms.get_context("device_target") == "Ascend")
    monkeypatch.setattr(ms_graph, "device_target", lambda: "Ascend")
    assert ms_graph.on_ascend() is True
    monkeypatch.setattr(ms_graph, "device_target", lambda: "CPU")
    assert ms_graph.on_ascend() is False


def test_built_gives_the_generated_primitive(monkeypatch):
    generated = fake_op(monkeypatch, built=True)
    assert ms_graph.npu_primitive("fake_op", "ascend-op-fake", "fake_npu") is generated.fake_npu_op


def test_not_built_names_the_op_the_package_and_why(monkeypatch):
    fake_op(monkeypatch, built=False, why="CANN was not found when the op was built")
    with pytest.raises(RuntimeError) as error:
        ms_graph.npu_primitive("fake_op", "ascend-op-fake", "fake_npu")
    message = str(error.value)
    assert message.startswith("fake_op: MindSpore's device_target is 'Ascend'")
    assert "ascend-op-fake" in message and message.endswith("CANN was not found when the op was built")
