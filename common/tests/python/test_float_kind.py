"""The float argument kind (``desc::Kind::kFloat``) through every front door common derives.

No op in the repository takes a float yet, so ``common/tests/float_op`` describes one,
``float_probe(x, scale, *, shift=1.0, bound=None) -> out``: its CPU kernel writes the three
doubles its host received into ``out`` (float64 [3], NaN for an absent ``bound``). The op is
built here against the installed common with ``ascend_ops_add_op()`` (the build every op uses:
describe program, generated ``_core`` / ``_torch`` / ``_ms`` modules and Python files), installed
into a temporary prefix and imported as ``ascend_ops.float_probe``. Each front door must deliver
a float exactly (0.1 arrives as the same double), take an int or a NumPy scalar for it, and
refuse a bool, a str or None with the op's TypeError.
"""
from __future__ import annotations

import importlib
import math
from pathlib import Path

import numpy as np
import pytest

import cmake_projects

import ascend_ops.common as common
from ascend_ops.common import codegen

PROJECT = Path(__file__).resolve().parents[1] / "float_op"
EXACT = 0.1  # not a float32, not a short binary fraction: any rounding on the way shows


@pytest.fixture(scope="module")
def probe(common_lib, tmp_path_factory: pytest.TempPathFactory):
    """ascend_ops.float_probe, built and installed into a temporary prefix."""
    with cmake_projects.installed_test_op(PROJECT, "float_probe", tmp_path_factory) as info:
        yield info


def _module(name: str):
    return importlib.import_module(f"ascend_ops.float_probe.{name}")


def _needs(info, framework: str) -> None:
    if not info.FRAMEWORKS.get(framework):
        pytest.skip(f"{framework} is not installed: the probe has no {framework} adapter")


def _exact(out, scale: float, shift: float = 1.0, bound=None) -> None:
    if isinstance(out, tuple):  # _core and MindSpore PyNative return a tuple of the outputs
        [out] = out
    got = np.asarray(out.asnumpy() if hasattr(out, "asnumpy") else out, dtype=np.float64)
    assert got.shape == (3,)
    assert got[0] == scale and got[1] == shift, got
    assert math.isnan(got[2]) if bound is None else got[2] == bound


# ---- the description and the generated files (no build needed) ----

def _description() -> dict:
    return {"name": "float_probe", "package": "ascend-op-float-probe", "doc": "d\n",
            "params": [{"name": "x", "kind": "tensor", "written": False, "optional": False, "keyword_only": False,
                        "default": None, "choices": None},
                       {"name": "scale", "kind": "float", "written": False, "optional": False,
                        "keyword_only": False, "default": None, "choices": None},
                       {"name": "bound", "kind": "float", "written": False, "optional": True,
                        "keyword_only": True, "default": "None", "choices": None}],
            "outputs": [{"name": "out", "dtype": "float64", "present_if": None}]}


def test_the_ascend_yaml_carries_a_float_as_an_int():
    yaml = codegen.ms_yaml(_description(), "float_probe")
    assert "    scale:\n      dtype: int\n" in yaml and "    bound:\n      dtype: int\n" in yaml


def test_the_mindspore_function_passes_a_float_as_its_bits():
    text = codegen.ms_py(_description(), "float_probe")
    assert "from ascend_ops.common.ms_front import ABSENT, float_bits, primitive_class" in text
    assert "    scale = float_bits(scale, 'float_probe', 'scale')\n" in text
    assert ("    if bound is None:\n        bound = 0\n    else:\n        bound = float_bits(bound, 'float_probe', "
            "'bound')\n        present = present + 4\n") in text


def test_an_op_without_floats_imports_no_float_bits():
    d = _description()
    d["params"] = d["params"][:1]
    assert "float_bits" not in codegen.ms_py(d, "float_probe")


def test_a_float_default_is_a_python_float():
    from ascend_ops.common.front_door import schema_default

    assert schema_default("1.0") == 1.0 and isinstance(schema_default("1.0"), float)
    assert schema_default("1e-3") == 1e-3 and schema_default("-2") == -2 and isinstance(schema_default("2"), int)


# ---- the built op ----

def test_the_description_names_the_kind_float(probe):
    d = _module("_description").DESCRIPTION
    assert [(p["name"], p["kind"], p["default"]) for p in d["params"]] == [
        ("x", "tensor", None), ("scale", "float", None), ("shift", "float", "1.0"), ("bound", "float", "None")]


def test_numpy_carries_floats_exactly(probe):
    api = _module("api")
    x = np.zeros(2)
    _exact(api.float_probe(x, EXACT), EXACT)
    _exact(api.float_probe(x, EXACT, shift=0.3, bound=-1e300), EXACT, 0.3, -1e300)
    _exact(api.float_probe(x, 2), 2.0)  # an int, as torch takes one
    _exact(api.float_probe(x, np.float32(0.5), shift=np.int64(3), bound=np.float64(EXACT)), 0.5, 3.0, EXACT)
    _exact(api.float_probe(x, math.inf), math.inf)  # any float: range checks are the op's own


@pytest.mark.parametrize("bad, kind", [(True, "bool"), (np.bool_(True), type(np.bool_(True)).__name__),
                                       ("0.1", "str"), (None, None), ([0.1], "list"), (np.zeros(2), "ndarray")])
def test_numpy_refuses_what_is_not_a_float(probe, bad, kind):
    core = _module("_core")
    message = "float_probe: scale should be given but is None" if bad is None else \
        f"float_probe: scale should be a float but is {kind}"
    with pytest.raises(TypeError, match=f"^{message}$"):
        core.run_cpu(np.zeros(2), bad)


def test_numpy_refuses_an_int_beyond_a_double(probe):
    with pytest.raises(ValueError, match="^float_probe: scale should fit in a float but is 1000"):
        _module("_core").run_cpu(np.zeros(2), 10 ** 400)


def test_numpy_host_error(probe):
    with pytest.raises(ValueError, match="shift should be >= 0"):
        _module("_core").run_cpu(np.zeros(2), 1.0, shift=-0.5)


def test_torch_schema_says_float(probe):
    _needs(probe, "torch")
    import torch

    _module("torch_ops")
    schema = str(torch.ops.ascend_ops.float_probe.default._schema)
    assert "float scale, *, float shift=1., float? bound=None" in schema, schema


def test_torch_eager_and_compile_carry_floats_exactly(probe):
    _needs(probe, "torch")
    import torch

    fn = _module("torch_ops").float_probe
    x = torch.zeros(2)
    _exact(fn(x, EXACT), EXACT)
    _exact(fn(x, 2, shift=3, bound=EXACT), 2.0, 3.0, EXACT)  # ints, as torch's float takes them
    with pytest.raises(ValueError, match="shift should be >= 0"):
        fn(x, 1.0, shift=-0.5)
    compiled = torch.compile(lambda t, s, b: fn(t, s, bound=b), dynamic=True, fullgraph=True)
    for scale in (EXACT, 0.25, 7):
        _exact(compiled(x, scale, -scale), scale, 1.0, -scale)


def test_torchair_converter_passes_a_float_attribute(probe, monkeypatch):
    _needs(probe, "torch")
    torchair_testing = pytest.importorskip("ascend_ops.devkit.torchair_testing")
    from ascend_ops.common import torchair

    gen = torchair_testing.stand_in_torchair(monkeypatch, "ascend_ops.float_probe")
    stand_in = next(gen)
    _module("torch_ops")
    convert = torchair.register_ge_converter("ascend_ops.float_probe", "FloatProbe")
    x = object()
    convert(x, EXACT, bound=2)
    [call] = stand_in["custom_op"]
    attrs = call["attrs"]
    assert {n: (type(a).__name__, a.value) for n, a in attrs.items()} == {
        "scale": ("Float", EXACT), "shift": ("Float", 1.0), "bound": ("Float", 2)}


def test_mindspore_pynative_carries_floats_exactly(probe):
    _needs(probe, "mindspore")
    import mindspore as ms

    ms.set_context(mode=ms.PYNATIVE_MODE)
    fn = _module("ms").float_probe
    x = ms.Tensor(np.zeros(2, np.float32))
    _exact(fn(x, EXACT), EXACT)
    _exact(fn(x, 2, 0.3, np.float32(0.5)), 2.0, 0.3, 0.5)
    native = _module("_ms")
    _exact(native.float_probe(x, EXACT, shift=np.int64(4)), EXACT, 4.0)
    for bad, kind in ((True, "bool"), ("0.1", "str")):
        with pytest.raises(TypeError, match=f"^float_probe: scale should be a float but is {kind}$"):
            fn(x, bad)
        with pytest.raises(TypeError, match=f"^float_probe: scale should be a float but is {kind}$"):
            native.float_probe(x, bad)


def test_mindspore_graph_carries_floats_exactly(probe):
    _needs(probe, "mindspore")
    import mindspore as ms

    op_ms = _module("ms")
    fn = op_ms.float_probe

    @ms.jit
    def given(x):
        return fn(x, 0.1, 0.3, -2.5)

    @ms.jit
    def long(x):  # more digits than a float32 has (MindSpore keeps a graph constant's double
        return fn(x, 0.123456789012345)  # within float32's normal range only)

    @ms.jit
    def defaults(x):
        return fn(x, 7)

    x = ms.Tensor(np.zeros(2, np.float32))
    _exact(given(x), 0.1, 0.3, -2.5)
    _exact(defaults(x), 7.0)
    _exact(long(x), 0.123456789012345)


def test_mindspore_graph_mode_cell(probe):
    _needs(probe, "mindspore")
    import mindspore as ms

    fn = _module("ms").float_probe

    class Net(ms.nn.Cell):
        def __init__(self):
            super().__init__()
            self.bound = -1 / math.sqrt(128)  # computed in Python: a graph's arithmetic is float32's

        def construct(self, x):
            return fn(x, EXACT, bound=self.bound)

    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        _exact(Net()(ms.Tensor(np.zeros(2, np.float32))), EXACT, 1.0, -1 / math.sqrt(128))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
