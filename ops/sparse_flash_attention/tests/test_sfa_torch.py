"""The PyTorch adapter of sparse_flash_attention: torch.ops.ascend_ops.sparse_flash_attention.

Golden comparisons (sfa_cases' rule) in eager mode for every layout pair, mode and dtype;
torch.compile(fullgraph=True) with static and dynamic shapes (one graph for many sizes); caches
as views of one allocation, as engines keep them; torch.library.opcheck; Meta / FakeTensor
outputs; errors with the documented classes. The torchair converter and the NPU adapter's
compile check: tests/test_torch_front_doors.py, for every op.
"""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("torch is not installed: the PyTorch adapter cannot be tested", allow_module_level=True)

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
from ascend_ops.sparse_flash_attention import torch_ops  # noqa: E402  (loads _torch)

import torch  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

from sfa_cases import DTYPES, MODES, SHAPES, Shape, assert_matches, make, to_torch  # noqa: E402
from sfa_cases import torch_to_numpy as to_numpy  # noqa: E402

OP = torch.ops.ascend_ops.sparse_flash_attention.default
SCHEMA = (
    "ascend_ops::sparse_flash_attention(Tensor query, Tensor key, Tensor value, Tensor sparse_indices, "
    "float scale_value, *, Tensor? block_table=None, Tensor? actual_seq_lengths_query=None, "
    "Tensor? actual_seq_lengths_kv=None, Tensor? query_rope=None, Tensor? key_rope=None, int sparse_block_size=1, "
    "str layout_query=\"BSND\", str layout_kv=\"PA_BSND\", int sparse_mode=3, "
    "int pre_tokens=9223372036854775807, int next_tokens=9223372036854775807, int attention_mode=2, "
    "bool return_softmax_lse=False) -> (Tensor attention_out, Tensor? softmax_max, Tensor? softmax_sum)"
)
LAYOUTS = [("BSND", "PA_BSND"), ("TND", "PA_BSND"), ("BSND", "BSND"), ("TND", "TND")]


def check(fn, shape: Shape, layouts, dtype: str, mode: int, seed: int = 0) -> None:
    args = make(shape, *layouts, dtype, seed=seed, length_dtype=np.int64 if seed % 2 else np.int32)
    out = fn(**to_torch(args), sparse_mode=mode, return_softmax_lse=True)
    assert out[0].dtype == to_torch({"q": args["query"]})["q"].dtype and out[1].dtype == torch.float32
    assert_matches([to_numpy(t) for t in out], args, dtype, mode)


# --- schema -------------------------------------------------------------------------------
def test_schema_is_the_spec():
    assert str(OP._schema) == SCHEMA
    assert not any(a.alias_info is not None for a in OP._schema.arguments), "the op mutates nothing"
    assert torch.Tag.pt2_compliant_tag in OP.tags


# --- eager --------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layouts", LAYOUTS, ids="-".join)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES[:3], ids=str)
def test_eager_matches_reference(shape, dtype, layouts, mode):
    check(OP, shape, layouts, dtype, mode, seed=mode + 1)


@pytest.mark.parametrize("entry", ["torch_ops", "package", "packet"])
def test_public_entries(entry):
    import ascend_ops.sparse_flash_attention as package

    fn = {"torch_ops": torch_ops.sparse_flash_attention, "package": package.sparse_flash_attention,
          "packet": torch.ops.ascend_ops.sparse_flash_attention}[entry]
    check(fn, SHAPES[1], ("TND", "PA_BSND"), "bfloat16", 3)


def test_lse_is_none_unless_asked():
    out, m, l = OP(**to_torch(make(SHAPES[0], "BSND", "PA_BSND", "float16")))
    assert m is None and l is None and out.shape == (2, 3, 4, 32)


def test_caches_as_views_of_one_tensor():
    """An engine's [2, num_blocks, block_size, 1, D] allocation: key = cache[0] (value = key) and
    key_rope a view with a larger block stride; the same result as contiguous copies."""
    args = make(SHAPES[1], "BSND", "PA_BSND", "bfloat16", shared_cache=True)
    t = to_torch(args)
    cache = torch.stack([t["key"], torch.zeros_like(t["key"])])
    t["key"] = t["value"] = cache[0]
    got = OP(**t, return_softmax_lse=True)
    t["key"] = t["value"] = cache[0].contiguous()
    t["key_rope"] = t["key_rope"].contiguous()
    want = OP(**t, return_softmax_lse=True)
    for g, w in zip(got, want):
        assert torch.equal(g, w)
    assert_matches([to_numpy(x) for x in got], args, "bfloat16", 3)


def test_inference_mode():
    with torch.inference_mode():
        check(OP, SHAPES[2], ("BSND", "BSND"), "float16", 0)


# --- torch.compile --------------------------------------------------------------------------
def _attend(q, k, idx, scale: float, bt, lq, lkv, qr, kr, sbs: int, layout_query: str, layout_kv: str, mode: int):
    return torch.ops.ascend_ops.sparse_flash_attention(
        q, k, k, idx, scale, block_table=bt, actual_seq_lengths_query=lq, actual_seq_lengths_kv=lkv, query_rope=qr,
        key_rope=kr, sparse_block_size=sbs, layout_query=layout_query, layout_kv=layout_kv, sparse_mode=mode,
        return_softmax_lse=True)


def _compiled_check(compiled, shape, layouts, dtype, mode, seed=0):
    args = make(shape, *layouts, dtype, seed=seed)
    t = to_torch(args)
    out = compiled(t["query"], t["key"], t["sparse_indices"], t["scale_value"], t.get("block_table"),
                   t.get("actual_seq_lengths_query"), t["actual_seq_lengths_kv"], t["query_rope"], t["key_rope"],
                   shape.sbs, *layouts, mode)
    assert_matches([to_numpy(x) for x in out], args, dtype, mode)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("layouts", LAYOUTS, ids="-".join)
def test_compiled_matches_reference(layouts, dynamic):
    torch._dynamo.reset()
    compiled = torch.compile(_attend, fullgraph=True, dynamic=dynamic)
    _compiled_check(compiled, SHAPES[1], layouts, "bfloat16", 3)


def test_dynamic_compile_serves_every_size():
    """One graph for several batch sizes (>= 2), lengths, rows and K."""
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(_attend, fullgraph=True, dynamic=True)
    for seed, (aq, akv, k) in enumerate([((3, 5), (40, 60), 12), ((2, 7, 4), (33, 90, 12), 20), ((9, 2), (100, 7), 9)]):
        _compiled_check(compiled, Shape(aq, akv, 4, 32, 8, k, block_size=8), ("BSND", "PA_BSND"), "float16", 3,
                        seed=seed)
    assert counters["stats"]["unique_graphs"] == 1, dict(counters["stats"])


def test_compiled_in_a_graph_with_other_ops():
    def step(q, k, idx, bt, lkv, qr, kr):
        out, m, l = torch.ops.ascend_ops.sparse_flash_attention(
            q * 2, k, k, idx, 0.5, block_table=bt, actual_seq_lengths_kv=lkv, query_rope=qr, key_rope=kr,
            return_softmax_lse=True)
        return out.sum(-1), m + torch.log(l)

    torch._dynamo.reset()
    t = to_torch(make(SHAPES[0], "BSND", "PA_BSND", "float32", seed=4, tails=False))
    inputs = (t["query"], t["key"], t["sparse_indices"], t["block_table"], t["actual_seq_lengths_kv"],
              t["query_rope"], t["key_rope"])
    want = step(*inputs)
    got = torch.compile(step, fullgraph=True)(*inputs)
    for g, w in zip(got, want):  # Inductor may sum in another order; empty rows: lse -inf in both
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)


# --- Meta / FakeTensor ----------------------------------------------------------------------
@pytest.mark.parametrize("layouts", [("BSND", "BSND"), ("TND", "TND")], ids="-".join)
@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_meta_outputs(layouts, dtype):
    t = to_torch(make(SHAPES[2], *layouts, dtype))
    meta = {k: (v.to("meta") if isinstance(v, torch.Tensor) else v) for k, v in t.items()}
    got = OP(**meta, return_softmax_lse=True)
    want = OP(**t, return_softmax_lse=True)
    for g, w in zip(got, want):
        assert g.device.type == "meta" and g.shape == w.shape and g.dtype == w.dtype
    with FakeTensorMode() as mode:
        fake = {k: (mode.from_tensor(v) if isinstance(v, torch.Tensor) else v) for k, v in t.items()}
        assert OP(**fake)[1] is None


def test_meta_refuses_bad_static_shapes():
    t = to_torch(make(SHAPES[2], "BSND", "BSND", "float16"))
    t["query_rope"] = t["query_rope"][:, :, :1].contiguous()
    meta = {k: (v.to("meta") if isinstance(v, torch.Tensor) else v) for k, v in t.items()}
    with pytest.raises(ValueError, match="query_rope should be"):
        OP(**meta)


# --- opcheck --------------------------------------------------------------------------------
@pytest.mark.parametrize("layouts,dtype", [(("BSND", "PA_BSND"), "bfloat16"), (("TND", "TND"), "float32"),
                                           (("BSND", "BSND"), "float16")], ids=str)
def test_opcheck(layouts, dtype):
    t = to_torch(make(SHAPES[1], *layouts, dtype))
    pos = tuple(t.pop(n) for n in ("query", "key", "value", "sparse_indices", "scale_value"))
    for lse in (False, True):
        torch.library.opcheck(OP, pos, dict(t, sparse_mode=3, return_softmax_lse=lse))


# --- errors ---------------------------------------------------------------------------------
def _bad(**changes):
    t = to_torch(make(SHAPES[1], "BSND", "PA_BSND", "float16", tails=False))
    t.update(changes)
    return t


BAD_INPUTS = [
    ("layout", lambda: _bad(layout_kv="BNSD"), ValueError, r"layout_kv should be 'PA_BSND', 'BSND' or 'TND'"),
    ("mode", lambda: _bad(sparse_mode=2), ValueError, r"sparse_mode should be 0"),
    ("attention_mode", lambda: _bad(attention_mode=0), ValueError, r"attention_mode should be 2"),
    ("dtype", lambda: _bad(key=torch.zeros(11, 16, 1, 64)), TypeError, r"key should have dtype float16"),
    ("complex", lambda: _bad(query_rope=torch.zeros(3, 1, 16, 16, dtype=torch.complex64)), TypeError,
     r"query_rope has dtype torch\.complex64"),
    ("rope missing", lambda: _bad(key_rope=None), ValueError, r"key_rope is required"),
    ("block id", lambda: _bad(block_table=torch.full((3, 8), 99, dtype=torch.int32)), IndexError,
     r"block_table\[0\]\[0\] = 99 is out of range"),
    ("length", lambda: _bad(actual_seq_lengths_kv=torch.tensor([150, 7, 64], dtype=torch.int32)), ValueError,
     r"actual_seq_lengths_kv\[0\] = 150 is beyond"),
    ("no table", lambda: _bad(block_table=None), ValueError, r"block_table is required"),
]


@pytest.mark.parametrize("build,exc,pattern", [c[1:] for c in BAD_INPUTS], ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_raises(build, exc, pattern):
    with pytest.raises(exc, match="sparse_flash_attention: " + pattern):
        OP(**build())


def test_scale_value_takes_an_int_and_is_applied_as_float32():
    t = _bad()
    a = OP(**dict(t, scale_value=1))
    b = OP(**dict(t, scale_value=1.0))
    assert torch.equal(a[0], b[0])
    with pytest.raises((TypeError, RuntimeError)):
        OP(**dict(t, scale_value="0.1"))


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_compiled_index_below_minus_one_raises_index_error(dynamic):
    torch._dynamo.reset()
    compiled = torch.compile(_attend, fullgraph=True, dynamic=dynamic)
    t = _bad()
    rest = (t["block_table"], None, t["actual_seq_lengths_kv"], t["query_rope"], t["key_rope"], 1, "BSND", "PA_BSND", 3)
    compiled(t["query"], t["key"], t["sparse_indices"], 0.1, *rest)
    bad = t["sparse_indices"].clone()
    bad[0, 0, 0, 0] = -3
    with pytest.raises(IndexError, match="sparse_indices row 0"):
        compiled(t["query"], t["key"], bad, 0.1, *rest)
