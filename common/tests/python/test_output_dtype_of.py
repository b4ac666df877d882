"""An output whose dtype is that of a tensor argument (``desc::Output::dtype_of``) through every
front door common derives.

No op in the repository has one yet (sparse_flash_attention's ``attention_out`` takes ``query``'s
dtype), so ``common/tests/dtype_of_op`` describes one, ``dtype_of_probe(index, x) -> (copy, count)``:
``copy`` has x's dtype (``dtype_of = "x"``; x is not the first tensor argument, whose dtype and
device a plain output would follow), ``count`` is a fixed float32 [1]. Its CPU kernel copies x's
bytes into ``copy`` and writes x's element count into ``count``. The op is built here against the
installed common with ``ascend_ops_add_op()`` (the build every op uses: describe program, generated
``_core`` / ``_torch`` / ``_ms`` modules and Python files), installed into a temporary prefix and
imported as ``ascend_ops.dtype_of_probe``.
"""
from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest

import cmake_projects

from ascend_ops.common import codegen

PROJECT = Path(__file__).resolve().parents[1] / "dtype_of_op"
OUTPUTS = [{"name": "copy", "dtype": None, "dtype_of": "x", "present_if": None},
           {"name": "count", "dtype": "float32", "dtype_of": None, "present_if": None}]


@pytest.fixture(scope="module")
def probe(common_lib, tmp_path_factory: pytest.TempPathFactory):
    """ascend_ops.dtype_of_probe, built and installed into a temporary prefix."""
    with cmake_projects.installed_test_op(PROJECT, "dtype_of_probe", tmp_path_factory) as info:
        yield info


def _module(name: str):
    return importlib.import_module(f"ascend_ops.dtype_of_probe.{name}")


def _needs(info, framework: str) -> None:
    if not info.FRAMEWORKS.get(framework):
        pytest.skip(f"{framework} is not installed: the probe has no {framework} adapter")


def _x(dtype) -> np.ndarray:
    """A [3, 4] array of distinct values of `dtype` (float16, float32 or ml_dtypes.bfloat16)."""
    return (np.arange(12, dtype=np.float32).reshape(3, 4) * 0.25 - 1).astype(dtype)


def _bf16():
    return pytest.importorskip("ml_dtypes").bfloat16


# ---- the description read by the Python side (no build needed) ----

def _description() -> dict:
    tensor = {"kind": "tensor", "written": False, "optional": False, "keyword_only": False, "default": None,
              "choices": None}
    return {"name": "dtype_of_probe", "package": "ascend-op-dtype-of-probe", "doc": "d\n",
            "params": [dict(tensor, name="index"), dict(tensor, name="x")], "outputs": OUTPUTS}


def test_the_generated_description_keeps_dtype_of():
    namespace: dict = {}
    exec(codegen.description_py(_description(), "dtype_of_probe"), namespace)
    assert namespace["DESCRIPTION"]["outputs"] == OUTPUTS


def test_mindspore_infer_takes_the_dtype_of_the_argument():
    pytest.importorskip("mindspore")
    import mindspore as ms
    from ascend_ops.common import ms_front

    d = _description()
    for name, kind in (("float16", ms.float16), ("bfloat16", ms.bfloat16), ("float32", ms.float32)):
        assert ms_front._output_kinds(d["outputs"], d["params"], ["int32", name]) == [kind, ms.float32]
    fixed = [{"name": "o", "dtype": "int32", "present_if": None}]  # a description without the key
    assert ms_front._output_kinds(fixed, d["params"], ["float16", "float16"]) == [ms.int32]


# ---- the built op ----

def test_the_description_records_dtype_of(probe):
    assert _module("_description").DESCRIPTION["outputs"] == OUTPUTS


@pytest.mark.parametrize("dtype", ["float16", "float32", "bfloat16"])
def test_numpy_allocates_the_argument_dtype(probe, dtype):
    x = _x(_bf16() if dtype == "bfloat16" else np.dtype(dtype))
    index = np.zeros(2, np.int32)
    for copy, count in (_module("api").dtype_of_probe(index, x), _module("_core").run_cpu(index, x)):
        assert copy.dtype == x.dtype and copy.shape == x.shape
        assert copy.tobytes() == x.tobytes()
        assert count.dtype == np.float32 and count.tolist() == [12.0]


def test_numpy_legacy_bfloat16_bits_come_back_as_bits(probe):
    bits = _x(np.float32).view(np.uint32) >> 16  # bfloat16 bit patterns, as before ml_dtypes
    x = bits.astype(np.uint16)
    copy, count = _module("api").dtype_of_probe(np.zeros(2, np.int32), x, dtype="bfloat16")
    assert copy.dtype == np.uint16 and np.array_equal(copy, x)
    assert count.dtype == np.float32
    with pytest.raises(TypeError, match="^dtype_of_probe: x has a dtype no op supports: uint16$"):
        _module("api").dtype_of_probe(np.zeros(2, np.int32), x)  # uint16 without dtype="bfloat16"


def test_numpy_given_output_is_checked(probe):
    core = _module("_core")
    index, x = np.zeros(2, np.int32), _x(np.float16)
    copy = np.empty((3, 4), np.float16)
    got, _ = core.run_cpu(index, x, copy=copy)
    assert got is copy and np.array_equal(copy, x)
    with pytest.raises(TypeError, match="copy should be a contiguous float16"):
        core.run_cpu(index, x, copy=np.empty((3, 4), np.float32))


TORCH_DTYPES = ["float16", "bfloat16", "float32"]


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_torch_eager_and_meta(probe, dtype):
    _needs(probe, "torch")
    import torch

    fn = _module("torch_ops").dtype_of_probe
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4).to(getattr(torch, dtype))
    index = torch.zeros(2, dtype=torch.int32)
    copy, count = fn(index, x)
    assert copy.dtype == x.dtype and torch.equal(copy, x)
    assert count.dtype == torch.float32 and count.tolist() == [12.0]
    copy, count = fn(index.to("meta"), x.to("meta"))
    assert copy.dtype == x.dtype and copy.shape == (3, 4) and copy.device.type == "meta"
    assert count.dtype == torch.float32


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_torch_fake_tensors_and_compile(probe, dtype):
    _needs(probe, "torch")
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    fn = _module("torch_ops").dtype_of_probe
    want = getattr(torch, dtype)
    with FakeTensorMode(shape_env=ShapeEnv()) as mode:  # what torch.compile propagates
        x = mode.from_tensor(torch.zeros(5, 7, dtype=want), symbolic_context=None)
        copy, count = fn(torch.zeros(2, dtype=torch.int32), x)
        assert copy.dtype == want and count.dtype == torch.float32
    compiled = torch.compile(lambda i, t: fn(i, t), dynamic=True, fullgraph=True)
    for n in (3, 5):
        x = torch.arange(n * 4, dtype=torch.float32).reshape(n, 4).to(want)
        copy, count = compiled(torch.zeros(2, dtype=torch.int32), x)
        assert copy.dtype == want and torch.equal(copy, x) and count.tolist() == [n * 4.0]


MS_DTYPES = ["float16", "bfloat16", "float32"]


def _ms_x(ms, dtype: str):
    return ms.Tensor(np.arange(12, dtype=np.float32).reshape(3, 4) * 0.25 - 1).astype(getattr(ms, dtype))


def _ms_check(ms, x, copy, count) -> None:
    assert copy.dtype == x.dtype and copy.shape == x.shape
    assert np.array_equal(copy.float().asnumpy(), x.float().asnumpy())
    assert count.dtype == ms.float32 and count.asnumpy().tolist() == [12.0]


@pytest.mark.parametrize("dtype", MS_DTYPES)
def test_mindspore_pynative(probe, dtype):
    _needs(probe, "mindspore")
    import mindspore as ms

    ms.set_context(mode=ms.PYNATIVE_MODE)
    x, index = _ms_x(ms, dtype), ms.Tensor(np.zeros(2, np.int32))
    _ms_check(ms, x, *_module("ms").dtype_of_probe(index, x))
    _ms_check(ms, x, *_module("_ms").dtype_of_probe(index, x))


@pytest.mark.parametrize("dtype", MS_DTYPES)
def test_mindspore_graph(probe, dtype):
    _needs(probe, "mindspore")
    import mindspore as ms

    fn = _module("ms").dtype_of_probe

    @ms.jit
    def traced(index, x):
        return fn(index, x)

    class Net(ms.nn.Cell):
        def construct(self, index, x):
            return fn(index, x)

    x, index = _ms_x(ms, dtype), ms.Tensor(np.zeros(2, np.int32))
    _ms_check(ms, x, *traced(index, x))
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        _ms_check(ms, x, *Net()(index, x))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
