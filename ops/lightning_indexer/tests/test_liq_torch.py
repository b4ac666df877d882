"""The PyTorch adapter of lightning_indexer_quant: torch.ops.ascend_ops.lightning_indexer_quant.

The schema; golden comparisons (the spec's tolerance) in eager mode for every layout pair and
sparse mode; torch.compile(fullgraph=True, dynamic=True) serving several sizes with one graph;
the Meta kernel; torch.library.opcheck; errors with the documented classes."""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("torch is not installed: the PyTorch adapter cannot be tested", allow_module_level=True)

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
from ascend_ops.lightning_indexer_quant import torch_ops  # noqa: E402,F401  (loads _torch)

import torch  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402

from liq_cases import K_LAYOUTS, MODES, Q_LAYOUTS, SHAPES, Shape, assert_topk, make, reference_rows  # noqa: E402

OP = torch.ops.ascend_ops.lightning_indexer_quant.default
SCHEMA = (
    "ascend_ops::lightning_indexer_quant(Tensor query, Tensor key, Tensor weights, Tensor query_dequant_scale, "
    "Tensor key_dequant_scale, *, Tensor? actual_seq_lengths_query=None, Tensor? actual_seq_lengths_key=None, "
    "Tensor? block_table=None, int query_quant_mode=0, int key_quant_mode=0, str layout_query=\"BSND\", "
    "str layout_key=\"PA_BSND\", int sparse_count=2048, int sparse_mode=3, bool return_value=False) -> "
    "(Tensor sparse_indices, Tensor? sparse_values)"
)


def to_torch(args: dict) -> dict:
    return {k: (torch.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v) for k, v in args.items()}


def test_schema_is_the_spec():
    assert str(OP._schema) == SCHEMA
    assert not any(a.alias_info is not None for a in OP._schema.arguments), "the op mutates nothing"
    assert torch.Tag.pt2_compliant_tag in OP.tags


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layout_key", K_LAYOUTS)
@pytest.mark.parametrize("layout_query", Q_LAYOUTS)
def test_eager_matches_reference(layout_query, layout_key, mode):
    shape = SHAPES[2]
    args = make(shape, layout_query, layout_key, weights_dtype="float16", scale_dtype="float16", seed=mode,
                length_dtype=np.int64 if mode else np.int32)
    idx, val = OP(**to_torch(args), sparse_mode=mode, return_value=True)
    assert idx.dtype == torch.int32 and val.dtype == torch.float32
    assert_topk(idx.numpy(), val.numpy(), reference_rows(args, mode), shape.k)


def test_bfloat16_weights():
    args = make(SHAPES[0], "BSND", "PA_BSND", seed=3)
    t = to_torch(args)
    t["weights"] = t["weights"].to(torch.bfloat16)
    idx, val = OP(**t, return_value=True)
    args["weights"] = t["weights"].float().numpy()
    assert_topk(idx.numpy(), val.numpy(), reference_rows(args, 3), SHAPES[0].k)


def test_values_are_none_unless_asked():
    idx, val = OP(**to_torch(make(SHAPES[1], "BSND", "PA_BSND")))
    assert val is None and idx.dtype == torch.int32


def _indexer(q, k, w, qs, ks, lq, lk, bt, layout_query, layout_key, sparse_count, sparse_mode):
    return torch.ops.ascend_ops.lightning_indexer_quant(q, k, w, qs, ks, actual_seq_lengths_query=lq,
                                                        actual_seq_lengths_key=lk, block_table=bt,
                                                        layout_query=layout_query, layout_key=layout_key,
                                                        sparse_count=sparse_count, sparse_mode=sparse_mode,
                                                        return_value=True)


def _compiled_check(compiled, shape, layout_query, layout_key, mode, seed=0):
    args = make(shape, layout_query, layout_key, seed=seed)
    t = to_torch(args)
    idx, val = compiled(t["query"], t["key"], t["weights"], t["query_dequant_scale"], t["key_dequant_scale"],
                        t["actual_seq_lengths_query"], t["actual_seq_lengths_key"], t.get("block_table"),
                        layout_query, layout_key, shape.k, mode)
    assert_topk(idx.numpy(), val.numpy(), reference_rows(args, mode), shape.k)


@pytest.mark.parametrize("layouts", [("BSND", "PA_BSND"), ("TND", "TND")], ids=str)
def test_compiled_dynamic_matches_reference(layouts):
    torch._dynamo.reset()
    compiled = torch.compile(_indexer, fullgraph=True, dynamic=True)
    _compiled_check(compiled, SHAPES[1], *layouts, 3)


def test_dynamic_compile_serves_every_size():
    """One graph for several batch sizes, lengths and rows."""
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(_indexer, fullgraph=True, dynamic=True)
    for seed, (s1, s2) in enumerate([((3, 5), (40, 60)), ((2, 7, 4), (33, 90, 12)), ((9, 2), (100, 7))]):
        shape = Shape(s1, s2, 4, 32, 24, block_size=8)
        _compiled_check(compiled, shape, "BSND", "PA_BSND", 3, seed=seed)
    assert counters["stats"]["unique_graphs"] == 1, dict(counters["stats"])


@pytest.mark.parametrize("layout_query", Q_LAYOUTS)
def test_meta_outputs(layout_query):
    t = to_torch(make(SHAPES[2], layout_query, "BSND"))
    meta = {k: (v.to("meta") if isinstance(v, torch.Tensor) else v) for k, v in t.items()}
    idx, val = OP(**meta, return_value=True)
    want = OP(**t, return_value=True)
    assert idx.device.type == "meta" and idx.shape == want[0].shape and idx.dtype == torch.int32
    assert val.shape == want[1].shape and val.dtype == torch.float32


def test_meta_refuses_bad_static_shapes():
    t = to_torch(make(SHAPES[2], "BSND", "BSND"))
    t["query_dequant_scale"] = t["query_dequant_scale"][:, :1].contiguous()
    meta = {k: (v.to("meta") if isinstance(v, torch.Tensor) else v) for k, v in t.items()}
    with pytest.raises(ValueError, match="lightning_indexer_quant: query_dequant_scale should have shape"):
        OP(**meta)


@pytest.mark.parametrize("layouts", [("BSND", "PA_BSND"), ("TND", "TND"), ("BSND", "BSND")], ids=str)
def test_opcheck(layouts):
    t = to_torch(make(SHAPES[1], *layouts))
    pos = tuple(t.pop(n) for n in ("query", "key", "weights", "query_dequant_scale", "key_dequant_scale"))
    for rv in (False, True):
        torch.library.opcheck(OP, pos, dict(t, sparse_mode=3, return_value=rv))


@pytest.mark.parametrize("change,exc,pattern", [
    (lambda t: t.update(query=t["query"].float()), TypeError, "query should have dtype int8"),
    (lambda t: t.update(query_quant_mode=1), ValueError, "query_quant_mode should be 0"),
    (lambda t: t["key_dequant_scale"].neg_(), ValueError, "key_dequant_scale should be finite and >= 0"),
    (lambda t: t["block_table"].fill_(999), IndexError, "block_table"),
], ids=["dtype", "quant_mode", "negative-ks", "block-id"])
def test_bad_input_raises(change, exc, pattern):
    t = to_torch(make(SHAPES[1], "BSND", "PA_BSND"))
    change(t)
    with pytest.raises(exc, match="lightning_indexer_quant: " + pattern):
        OP(**t)
