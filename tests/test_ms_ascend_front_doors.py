"""Every op's MindSpore front door on Ascend (the ops found through the ``ascend_ops.ops`` entry
points, their calls built from their descriptions): ``ms.<op>`` picks the generated graph
primitive (its op yaml generated from the description) from the build info, or raises a
RuntimeError naming the op and why, eagerly and when a graph is compiled. No NPU here:
device_target and the build info are faked (the generated primitive is a recorder); the kernels
themselves are only compile-checked (tests/test_ms_ascend_compile.py), not run on NPU.
"""
from __future__ import annotations

import importlib
import struct

import numpy as np
import pytest

ms = pytest.importorskip("mindspore", reason="mindspore is not installed")  # before the adapters
from mindspore import Tensor  # noqa: E402

from ascend_ops.devkit import ms_ascend_testing as fake  # noqa: E402
from ascend_ops.common.front_door import schema_default  # noqa: E402
from ascend_ops.devkit.ms_ascend_testing import on_ascend  # noqa: E402,F401  (a fixture)
from ascend_ops.common.registry import installed_ops  # noqa: E402

OPS = [op.name for op in installed_ops()]


def parts(op: str):
    """(description, build info, ms front door module) of an op."""
    description = importlib.import_module(f"ascend_ops.{op}._description").DESCRIPTION
    return (description, importlib.import_module(f"ascend_ops.{op}._build_info"),
            importlib.import_module(f"ascend_ops.{op}.ms"))


def call_args(description: dict):
    """Positional arguments for every parameter: a small tensor per tensor, the schema default
    (or 1) per scalar. Enough to reach the primitive's choice: nothing runs a kernel."""
    args = []
    for p in description["params"]:
        if p["kind"] == "tensor":
            args.append(Tensor(np.zeros((1,), np.int32)))
        else:
            args.append(1 if p["default"] is None else schema_default(p["default"]))
    return args


@pytest.mark.parametrize("op", OPS)
def test_not_built_raises_naming_the_op_and_why(op, on_ascend, monkeypatch):
    description, info, op_ms = parts(op)
    fake.fake_not_built(monkeypatch, info)
    with pytest.raises(RuntimeError, match=rf"^{op}: MindSpore's device_target is 'Ascend'.*"
                                           rf"{description['package']}.*CANN was not found"):
        getattr(op_ms, description["name"])(*call_args(description))


@pytest.mark.parametrize("op", OPS)
def test_not_built_raises_when_a_graph_is_compiled(op, on_ascend, monkeypatch):
    description, info, op_ms = parts(op)
    fake.fake_not_built(monkeypatch, info)
    ms.set_context(mode=ms.GRAPH_MODE)
    args = call_args(description)
    tensors = [a for a, p in zip(args, description["params"]) if p["kind"] == "tensor"]
    fn = getattr(op_ms, description["name"])

    def step(*given):  # the tensors are the graph's inputs, the scalars its constants
        it = iter(given)
        return fn(*[next(it) if p["kind"] == "tensor" else a for a, p in zip(args, description["params"])])

    with pytest.raises(RuntimeError, match=f"{op}: MindSpore's device_target is 'Ascend'"):
        ms.jit(step)(*tensors)


@pytest.mark.parametrize("op", OPS)
def test_built_calls_the_generated_primitive_with_the_yaml_inputs(op, on_ascend, monkeypatch):
    description, info, op_ms = parts(op)
    result = tuple(f"out{i}" for i in range(len(description["outputs"]))) or "out"
    calls = fake.fake_generated_primitive(monkeypatch, info, op, result)
    args = call_args(description)
    out = getattr(op_ms, description["name"])(*args)
    names = fake.yaml_arg_names(__file__, op)
    assert names == [p["name"] for p in description["params"]] + ["present"]
    [call] = calls
    assert len(call) == len(names)
    for got, given, p in zip(call, args, description["params"]):
        if p["kind"] == "tensor":
            assert got is given, p["name"]
        elif given is None:
            assert got == 0, p["name"]  # an absent optional int, float or str, its present bit off
        elif p["kind"] == "str":
            assert got == p["choices"].index(given), p["name"]  # its code: the index among the choices
        elif p["kind"] == "float":
            assert got == struct.unpack("=q", struct.pack("=d", given))[0], p["name"]  # its double's bits
        else:
            assert got == given, p["name"]
    optional_tensors = sum(1 << i for i, p in enumerate(description["params"]) if p["kind"] == "tensor" and p["optional"])
    assert call[-1] == optional_tensors  # every tensor given, no optional int
    if description["outputs"]:
        flags = {o["present_if"] for o in description["outputs"]} - {None}
        shown = all(dict(zip([p["name"] for p in description["params"]], args))[f] for f in flags)
        assert out == tuple(r if shown or not o["present_if"] else None
                            for r, o in zip(result, description["outputs"]))
    else:
        assert out == "out"


@pytest.mark.parametrize("op", OPS)
def test_the_eager_function_the_generated_primitive_imports_exists(op):
    _, _, op_ms = parts(op)
    assert callable(getattr(op_ms, f"{op}_npu"))  # gen_custom_ops.py -m ascend_ops.<op>.ms
