"""Fakes for the MindSpore-on-Ascend front-door tests (tests/test_ms_ascend_front_doors.py, for every op).

No NPU runs those tests: MindSpore's device_target, the op's build info and the generated graph
primitive are faked with pytest's ``monkeypatch``. Import ``mindspore`` before this module's
functions are called (the tests ``importorskip`` it). A test module imports the :func:`on_ascend`
fixture to use it.
"""
from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any, List

import pytest
import yaml

from ascend_ops.common import ms_graph

__all__ = ["on_ascend", "fake_not_built", "fake_generated_primitive", "yaml_arg_names"]


@pytest.fixture
def on_ascend(monkeypatch, tmp_path):
    """MindSpore's device_target reads 'Ascend', in PyNative mode (restored after the test). Runs
    in tmp_path: a graph that fails to compile makes MindSpore write rank_0/om/analyze_fail.ir
    into the working directory."""
    import mindspore as ms

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ms_graph, "device_target", lambda: "Ascend")
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


def fake_not_built(monkeypatch, info) -> None:
    """The op's build info (``<package>._build_info``) says mindspore_ascend was not built, for want of CANN."""
    monkeypatch.setattr(info, "FRAMEWORKS", {**info.FRAMEWORKS, "mindspore_ascend": False})
    monkeypatch.setattr(info, "NOT_BUILT_WHY", {"mindspore_ascend": "CANN was not found when the op was built"})


def fake_generated_primitive(monkeypatch, info, op: str, result: Any) -> List[tuple]:
    """mindspore_ascend built, with the op package's ``_ms_graph.<op>_npu_op`` a recorder returning
    ``result``: returns the list its calls' arguments are appended to."""
    calls: List[tuple] = []
    package = info.__name__.rpartition(".")[0]
    generated = types.ModuleType(f"{package}._ms_graph")
    setattr(generated, f"{op}_npu_op", lambda *args: calls.append(args) or result)
    monkeypatch.setitem(sys.modules, generated.__name__, generated)
    monkeypatch.setattr(info, "FRAMEWORKS", {**info.FRAMEWORKS, "mindspore_ascend": True})
    return calls


def yaml_arg_names(test_file: str, op: str) -> List[str]:
    """The input names of ``<op>_npu`` in the op definition yaml the build generates from the op's
    description (``ascend_ops.common.codegen.ms_yaml`` over ``ascend_ops.<op>._description``)."""
    import importlib

    from ascend_ops.common import codegen

    description = importlib.import_module(f"ascend_ops.{op}._description").DESCRIPTION
    return list(yaml.safe_load(codegen.ms_yaml(description, op))[f"{op}_npu"]["args"])
