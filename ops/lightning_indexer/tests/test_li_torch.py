"""The PyTorch adapter of lightning_indexer: torch.ops.ascend_ops.lightning_indexer.

Golden comparisons (li_cases' rule) in eager mode for every layout, sparse mode and dtype;
torch.compile(fullgraph=True) with static and dynamic shapes (one graph for many sizes);
torch.library.opcheck; the Meta kernel's SymInt outputs; errors with the documented classes; the
torchair converter and the NPU adapter's compile check: tests/test_torch_front_doors.py, for every op.
"""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("torch is not installed: the PyTorch adapter cannot be tested", allow_module_level=True)

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
from ascend_ops.lightning_indexer import torch_ops  # noqa: E402  (loads _torch)

import torch  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

from li_cases import (DTYPES, K_LAYOUTS, MODES, Q_LAYOUTS, SHAPES, Shape, assert_topk, compress, make,  # noqa: E402
                      reference_rows)

OP = torch.ops.ascend_ops.lightning_indexer.default
SCHEMA = (
    "ascend_ops::lightning_indexer(Tensor query, Tensor key, Tensor weights, *, "
    "Tensor? actual_seq_lengths_query=None, Tensor? actual_seq_lengths_key=None, Tensor? block_table=None, "
    "Tensor? cmp_residual_k=None, str layout_query=\"BSND\", str layout_key=\"PA_BSND\", int sparse_count=2048, "
    "int sparse_mode=3, int cmp_ratio=1, bool return_value=False) -> (Tensor sparse_indices, Tensor? sparse_values)"
)
TORCH_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}


def to_torch(args: dict, dtype: str) -> dict:
    """li_cases' NumPy arguments as torch tensors (bfloat16 bit patterns reinterpreted)."""
    out = {}
    for name, value in args.items():
        if isinstance(value, np.ndarray):
            if value.dtype == np.uint16:
                value = torch.from_numpy(value.view(np.int16).copy()).view(torch.bfloat16)
            else:
                value = torch.from_numpy(value.copy())
        out[name] = value
    return out


def check(fn, shape: Shape, layout_query: str, layout_key: str, dtype: str, mode: int, seed: int = 0) -> None:
    args = make(shape, layout_query, layout_key, dtype, seed=seed, length_dtype=np.int64 if seed % 2 else np.int32)
    idx, val = fn(**to_torch(args, dtype), sparse_mode=mode, return_value=True)
    assert idx.dtype == torch.int32 and val.dtype == torch.float32
    assert_topk(idx.numpy(), val.numpy(), reference_rows(args, dtype, mode), shape.k)


# --- schema -------------------------------------------------------------------------------
def test_schema_is_the_spec():
    assert str(OP._schema) == SCHEMA
    assert not any(a.alias_info is not None for a in OP._schema.arguments), "the op mutates nothing"
    assert torch.Tag.pt2_compliant_tag in OP.tags


# --- eager --------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layout_key", K_LAYOUTS)
@pytest.mark.parametrize("layout_query", Q_LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [SHAPES[0], SHAPES[1], SHAPES[2], SHAPES[4]], ids=str)
def test_eager_matches_reference(shape, dtype, layout_query, layout_key, mode):
    check(OP, shape, layout_query, layout_key, dtype, mode, seed=mode + 1)


@pytest.mark.parametrize("entry", ["torch_ops", "package", "packet"])
def test_public_entries(entry):
    import ascend_ops.lightning_indexer as package

    fn = {"torch_ops": torch_ops.lightning_indexer, "package": package.lightning_indexer,
          "packet": torch.ops.ascend_ops.lightning_indexer}[entry]
    check(fn, SHAPES[1], "TND", "PA_BSND", "bfloat16", 3)


# --- DeepSeek-V4: compressed keys -----------------------------------------------------------
V4_SHAPE = Shape((1, 2, 9), (300, 40, 2), 8, 32, 64, block_size=16, name="v4")  # batch 2: from scratch


@pytest.mark.parametrize("ratio", [1, 4, 128])
@pytest.mark.parametrize("layouts", [("TND", "PA_BSND"), ("BSND", "TND")], ids=str)
def test_compressed_keys_eager(layouts, ratio):
    args = compress(make(V4_SHAPE, *layouts, "bfloat16", seed=ratio), ratio, None if ratio == 1 else [3, 1, 1])
    idx, val = OP(**to_torch(args, "bfloat16"), sparse_mode=3, return_value=True)
    assert_topk(idx.numpy(), val.numpy(), reference_rows(args, "bfloat16", 3), V4_SHAPE.k)


def _v4_indexer(query, key, weights, lengths_q, lengths_k, block_table, residual, cmp_ratio: int):
    return torch.ops.ascend_ops.lightning_indexer(
        query, key, weights, actual_seq_lengths_query=lengths_q, actual_seq_lengths_key=lengths_k,
        block_table=block_table, cmp_residual_k=residual, layout_query="TND", layout_key="PA_BSND",
        sparse_count=64, sparse_mode=3, cmp_ratio=cmp_ratio, return_value=True)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_compressed_keys_compiled(dynamic):
    torch._dynamo.reset()
    compiled = torch.compile(_v4_indexer, fullgraph=True, dynamic=dynamic)
    args = compress(make(V4_SHAPE, "TND", "PA_BSND", "float16", seed=2), 4, [0, 3, 1])
    t = to_torch(args, "float16")
    idx, val = compiled(t["query"], t["key"], t["weights"], t["actual_seq_lengths_query"],
                        t["actual_seq_lengths_key"], t["block_table"], t["cmp_residual_k"], 4)
    assert_topk(idx.numpy(), val.numpy(), reference_rows(args, "float16", 3), V4_SHAPE.k)


def test_compressed_keys_opcheck():
    t = to_torch(compress(make(V4_SHAPE, "TND", "PA_BSND", "bfloat16"), 4, [2, 3, 1]), "bfloat16")
    query, key, weights = t.pop("query"), t.pop("key"), t.pop("weights")
    torch.library.opcheck(OP, (query, key, weights), dict(t, sparse_mode=3, return_value=True))


def test_values_are_none_unless_asked():
    args = to_torch(make(SHAPES[0], "BSND", "PA_BSND", "float16"), "float16")
    idx, val = OP(**args)
    assert val is None and idx.shape == (3, 2, 1, 64)


def test_inference_mode():
    with torch.inference_mode():
        check(OP, SHAPES[2], "BSND", "BSND", "float16", 0)


# --- torch.compile --------------------------------------------------------------------------
def _indexer(query, key, weights, lengths_q, lengths_k, block_table, layout_query: str, layout_key: str,
             sparse_count: int, sparse_mode: int):
    idx, val = torch.ops.ascend_ops.lightning_indexer(
        query, key, weights, actual_seq_lengths_query=lengths_q, actual_seq_lengths_key=lengths_k,
        block_table=block_table, layout_query=layout_query, layout_key=layout_key, sparse_count=sparse_count,
        sparse_mode=sparse_mode, return_value=True)
    return idx, val


def _compiled_check(compiled, shape, layout_query, layout_key, dtype, mode, seed=0):
    args = make(shape, layout_query, layout_key, dtype, seed=seed)
    t = to_torch(args, dtype)
    idx, val = compiled(t["query"], t["key"], t["weights"], t["actual_seq_lengths_query"],
                        t["actual_seq_lengths_key"], t.get("block_table"), layout_query, layout_key, shape.k, mode)
    assert_topk(idx.numpy(), val.numpy(), reference_rows(args, dtype, mode), shape.k)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("layouts", [("BSND", "PA_BSND"), ("TND", "TND"), ("BSND", "BSND")], ids=str)
def test_compiled_matches_reference(layouts, dynamic):
    torch._dynamo.reset()
    compiled = torch.compile(_indexer, fullgraph=True, dynamic=dynamic)
    _compiled_check(compiled, SHAPES[1], *layouts, "bfloat16", 3)


def test_dynamic_compile_serves_every_size():
    """One graph for several batch sizes (>= 2: torch specialises sizes 0 and 1), lengths and rows."""
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(_indexer, fullgraph=True, dynamic=True)
    for seed, (s1, s2) in enumerate([((3, 5), (40, 60)), ((2, 7, 4), (33, 90, 12)), ((9, 2), (100, 7))]):
        shape = Shape(s1, s2, 4, 32, 24, block_size=8)
        _compiled_check(compiled, shape, "BSND", "PA_BSND", "float16", 3, seed=seed)
    assert counters["stats"]["unique_graphs"] == 1, dict(counters["stats"])


def test_compiled_in_a_graph_with_other_ops():
    def step(q, k, w, lk, bt):
        idx, val = torch.ops.ascend_ops.lightning_indexer(q * 2, k, w.float(), actual_seq_lengths_key=lk,
                                                          block_table=bt, sparse_count=16, return_value=True)
        return idx.long().sum(-1), val.clamp(min=0).sum()

    torch._dynamo.reset()
    t = to_torch(make(SHAPES[0], "BSND", "PA_BSND", "float32", seed=4), "float32")
    inputs = (t["query"], t["key"], t["weights"], t["actual_seq_lengths_key"], t["block_table"])
    want = step(*inputs)
    got = torch.compile(step, fullgraph=True)(*inputs)
    assert torch.equal(got[0], want[0]) and torch.allclose(got[1], want[1])


# --- Meta / FakeTensor ----------------------------------------------------------------------
@pytest.mark.parametrize("layout_query", Q_LAYOUTS)
def test_meta_outputs(layout_query):
    t = to_torch(make(SHAPES[2], layout_query, "BSND", "float16"), "float16")
    meta = {k: (v.to("meta") if isinstance(v, torch.Tensor) else v) for k, v in t.items()}
    idx, val = OP(**meta, return_value=True)
    want = OP(**t, return_value=True)
    assert idx.device.type == "meta" and idx.shape == want[0].shape and idx.dtype == torch.int32
    assert val.shape == want[1].shape and val.dtype == torch.float32
    with FakeTensorMode() as mode:
        fake = {k: (mode.from_tensor(v) if isinstance(v, torch.Tensor) else v) for k, v in t.items()}
        assert OP(**fake)[1] is None


def test_meta_refuses_bad_static_shapes():
    t = to_torch(make(SHAPES[2], "BSND", "BSND", "float16"), "float16")
    t["weights"] = t["weights"][:, :1].contiguous().to("meta")
    meta = {k: (v.to("meta") if isinstance(v, torch.Tensor) else v) for k, v in t.items()}
    with pytest.raises(ValueError, match="weights should be"):
        OP(**meta)


# --- opcheck --------------------------------------------------------------------------------
@pytest.mark.parametrize("layouts,dtype", [(("BSND", "PA_BSND"), "bfloat16"), (("TND", "TND"), "float32"),
                                           (("BSND", "BSND"), "float16")], ids=str)
def test_opcheck(layouts, dtype):
    t = to_torch(make(SHAPES[1], *layouts, dtype), dtype)
    query, key, weights = t.pop("query"), t.pop("key"), t.pop("weights")
    for rv in (False, True):
        torch.library.opcheck(OP, (query, key, weights), dict(t, sparse_mode=3, return_value=rv))


# --- errors ---------------------------------------------------------------------------------
def _bad(**changes):
    t = to_torch(make(SHAPES[1], "BSND", "PA_BSND", "float16"), "float16")
    t.update(changes)
    return t


BAD_INPUTS = [
    ("layout", lambda: _bad(layout_key="BNSD"), ValueError, r"layout_key should be 'PA_BSND', 'BSND' or 'TND'"),
    ("mode", lambda: _bad(sparse_mode=2), ValueError, r"sparse_mode should be 0 \(no mask\) or 3"),
    ("count", lambda: _bad(sparse_count=9000), ValueError, r"sparse_count should be in \[1, 8192\]"),
    ("dtype", lambda: _bad(key=torch.zeros(4, 8, 1, 32)), TypeError, r"key should have dtype float16"),
    ("complex", lambda: _bad(weights=torch.zeros(2, 10, 4, dtype=torch.complex64)), TypeError,
     r"weights has dtype torch\.complex64"),
    ("shape", lambda: _bad(weights=torch.zeros(2, 10, 3, dtype=torch.float16)), ValueError,
     r"weights should be \[B, S1, N1\] or \[B, S1, N1, 1\] with N1"),
    ("block id", lambda: _bad(block_table=torch.full((2, 21), 99, dtype=torch.int32)), IndexError,
     r"block_table\[0\]\[0\] = 99 is out of range"),
    ("length", lambda: _bad(actual_seq_lengths_key=torch.tensor([150, 1000], dtype=torch.int32)), ValueError,
     r"actual_seq_lengths_key\[1\] = 1000 is beyond"),
    ("no table", lambda: _bad(block_table=None), ValueError, r"block_table is required"),
    ("cmp_ratio", lambda: _bad(cmp_ratio=256), ValueError, r"cmp_ratio should be in \[1, 128\]"),
    ("no residual", lambda: _bad(cmp_ratio=4), ValueError, r"cmp_residual_k is required"),
    ("residual", lambda: _bad(cmp_ratio=4, cmp_residual_k=torch.tensor([1, 4], dtype=torch.int32)), ValueError,
     r"cmp_residual_k\[1\] = 4 is out of range"),
]


@pytest.mark.parametrize("build,exc,pattern", [c[1:] for c in BAD_INPUTS], ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_raises(build, exc, pattern):
    with pytest.raises(exc, match="lightning_indexer: " + pattern):
        OP(**build())


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_compiled_block_id_out_of_range_raises_index_error(dynamic):
    torch._dynamo.reset()
    compiled = torch.compile(_indexer, fullgraph=True, dynamic=dynamic)
    t = _bad()
    args = (t["query"], t["key"], t["weights"], t["actual_seq_lengths_query"], t["actual_seq_lengths_key"])
    compiled(*args, t["block_table"], "BSND", "PA_BSND", 20, 3)
    with pytest.raises(IndexError, match="block_table"):
        compiled(*args, torch.full_like(t["block_table"], 99), "BSND", "PA_BSND", 20, 3)
