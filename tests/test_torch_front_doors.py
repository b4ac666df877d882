"""What every op's torch front door shares, checked once for every installed op (the
``ascend_ops.ops`` entry points) against its description (``ascend_ops.<op>._description``):
the torchair converter (against a stand-in torchair: the real one needs CANN) and the generated
PrivateUse1 adapter (compiled against the torch_npu wheel's headers; not run on NPU)."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import inspect
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")

from ascend_ops.devkit import npu_compile_check, torchair_testing  # noqa: E402
from ascend_ops.common.front_door import schema_default  # noqa: E402
from ascend_ops.common.registry import installed_ops  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
OPS = [op.name for op in installed_ops()]
ATTR_KINDS = {"int": "Int", "symint": "Int", "str": "Str", "bool": "Bool", "float": "Float"}


def description(op: str) -> dict:
    return importlib.import_module(f"ascend_ops.{op}._description").DESCRIPTION


def torch_ops(op: str):
    return importlib.import_module(f"ascend_ops.{op}.torch_ops")


def _value(param: dict):
    """A value the converter accepts for a non-tensor argument: its schema default, else 1."""
    return 1 if param["default"] is None else schema_default(param["default"])


@pytest.fixture
def stand_in(monkeypatch, request):
    yield from torchair_testing.stand_in_torchair(monkeypatch, f"ascend_ops.{request.param}")


@pytest.mark.parametrize("op", OPS)
def test_torchair_not_imported_without_torchair(op):
    if importlib.util.find_spec("torchair") is not None or "torchair" in sys.modules:
        pytest.skip("torchair is installed here: the no-torchair path cannot be observed")
    assert f"ascend_ops.{op}.torchair_converter" not in sys.modules
    assert torch_ops(op).register_torchair_converter() is False
    assert "torchair" not in sys.modules


@pytest.mark.parametrize("stand_in", OPS, indirect=True)
def test_torchair_converter_follows_the_description(stand_in, request):
    op = request.node.callspec.params["stand_in"]
    d = description(op)
    assert torch_ops(op).register_torchair_converter() is True
    [(aten_op, fn)] = stand_in["register"]
    assert aten_op is getattr(torch.ops.ascend_ops, d["name"]).default
    # torchair calls a converter with the schema's argument names, then meta_outputs
    schema = [a.name for a in aten_op._schema.arguments]
    signature = inspect.signature(fn).parameters
    assert list(signature)[:len(schema)] == schema and "meta_outputs" in signature
    for arg in aten_op._schema.arguments:
        if arg.kwarg_only:
            assert signature[arg.name].default == arg.default_value, arg.name
    values = {p["name"]: object() if p["kind"] == "tensor" else _value(p) for p in d["params"]}
    out = fn(**values, meta_outputs=None)
    [call] = stand_in["custom_op"]
    assert call["op_type"] == importlib.import_module(f"ascend_ops.{op}.torchair_converter").GE_OP_TYPE
    tensors = [p["name"] for p in d["params"] if p["kind"] == "tensor"]
    assert list(call["inputs"]) == tensors and all(call["inputs"][n] is values[n] for n in tensors)
    # the op's outputs, or the tensors it writes as ref outputs named like their inputs
    assert call["outputs"] == ([o["name"] for o in d["outputs"]] or [p["name"] for p in d["params"] if p["written"]])
    kinds = {p["name"]: p["kind"] for p in d["params"]}
    for name, attr in (call["attrs"] or {}).items():
        assert type(attr).__name__ == ATTR_KINDS[kinds[name]] and attr.value == values[name], name
    if not d["outputs"]:
        assert out is None
    else:
        results = out if isinstance(out, tuple) else (out,)
        for o, got, made in zip(d["outputs"], results, call["results"]):
            assert got is (None if o["present_if"] and not values[o["present_if"]] else made), o["name"]


@pytest.mark.parametrize("op", OPS)
def test_torchair_import_failure_is_reported_not_fatal(op, monkeypatch):
    class Broken(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "torchair":
                return importlib.util.spec_from_loader(name, loader=self)
            return None

        def create_module(self, spec):
            raise ImportError("libascendcl.so: cannot open shared object file")

        def exec_module(self, module):
            raise AssertionError("unreachable")

    module = torch_ops(op)
    monkeypatch.delitem(sys.modules, "torchair", raising=False)
    torchair_testing.forget_converter(monkeypatch, f"ascend_ops.{op}")
    monkeypatch.setattr(sys, "meta_path", [Broken(), *sys.meta_path])
    with pytest.raises(ImportError, match="libascendcl"):
        module.register_torchair_converter()
    with pytest.warns(RuntimeWarning, match=f"converter of {description(op)['name']} is not registered"):
        module._register_torchair_converter_on_import()


# --- the PrivateUse1 adapter: compile check against the torch_npu wheel ---------------------------
@pytest.fixture(scope="module")
def torch_npu_root() -> Path:
    return npu_compile_check.torch_npu_root(REPO)


# Only ops with an AscendC kernel get a PrivateUse1 adapter (a cpu-only op, ascend_ops_add_op
# without kernel/, builds none).
OPS_WITH_KERNELS = [op for op in OPS if npu_compile_check.op_source(REPO, op).has_kernel]


@pytest.mark.parametrize("op", OPS_WITH_KERNELS)
def test_npu_adapter_compiles_and_calls_only_exported_symbols(op, torch_npu_root):
    """The generated PrivateUse1 registration compiles with the flags the real build uses, and
    every symbol it needs is ours (aop::) or exported by libtorch_npu, torch or the C++ runtime:
    the adapter links where torch_npu is installed (EXEC_NPU_CMD would not)."""
    obj = npu_compile_check.compile_adapter(npu_compile_check.op_source(REPO, op), REPO, torch_npu_root)
    assert obj.stat().st_size > 0
    missing, needed = npu_compile_check.undefined_symbols(obj, torch_npu_root)
    assert not missing, f"the PrivateUse1 adapter needs symbols no library exports: {missing}"
    assert any("c10_npu::getCurrentNPUStream" in name for name in needed)
