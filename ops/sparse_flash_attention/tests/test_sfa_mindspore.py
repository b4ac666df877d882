"""sparse_flash_attention with MindSpore tensors: PyNative, ms.jit and GRAPH_MODE Cells.

Golden comparisons (sfa_cases' rule) in PyNative for every layout pair, both sparse modes and
float16 / bfloat16 / float32, with and without the lse pair; the same through ms.jit functions
and a GRAPH_MODE Cell; bad inputs raise the documented exception naming the argument (PyNative:
at the call or at the next check point for data errors; graph: at compile time for layouts,
dtypes and shapes, at run time as RuntimeError carrying ours for lengths, block ids, indices).
"""
from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

ms = pytest.importorskip("mindspore", reason="mindspore is not installed")  # before the adapter
from mindspore import Tensor, nn  # noqa: E402

import ascend_ops.sparse_flash_attention as sfa  # noqa: E402
from ascend_ops.common import check_errors  # noqa: E402
from ascend_ops.devkit.testing import ms_synchronize  # noqa: E402
from ascend_ops.sparse_flash_attention import ms as sfa_ms  # noqa: E402
from sfa_cases import DTYPES, MODES, SHAPES, Shape, assert_matches, make  # noqa: E402

TENSORS = ("query", "key", "value", "sparse_indices")
OPTIONAL = ("block_table", "actual_seq_lengths_query", "actual_seq_lengths_kv", "query_rope", "key_rope")
SMALL = Shape((3, 2), (20, 9), 4, 16, 4, 8, block_size=4, s1_pad=1)
LAYOUTS = [("BSND", "PA_BSND"), ("TND", "PA_BSND"), ("BSND", "BSND"), ("TND", "TND")]


@pytest.fixture(autouse=True)
def _pynative_and_tmp_cwd(tmp_path, monkeypatch):
    """Each test starts in PyNative; MindSpore's compile reports (analyze_fail.ir) go to tmp."""
    monkeypatch.chdir(tmp_path)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


def to_ms(args: dict) -> dict:
    out = {}
    for name, value in args.items():
        if isinstance(value, np.ndarray):
            if value.dtype == ml_dtypes.bfloat16:
                value = Tensor(value.astype(np.float32), dtype=ms.bfloat16)
            else:
                value = Tensor(np.ascontiguousarray(value))
        out[name] = value
    if args.get("value") is args.get("key"):
        out["value"] = out["key"]
    return out


def to_numpy(t) -> np.ndarray:
    if t.dtype == ms.bfloat16:
        return t.float().asnumpy().astype(ml_dtypes.bfloat16)
    return t.asnumpy()


def check(outs, args, dtype, mode, lse) -> None:
    out, m, l = outs
    if lse:
        assert m.dtype == ms.float32 and l.dtype == ms.float32
        assert_matches([to_numpy(out), m.asnumpy(), l.asnumpy()], args, dtype, mode)
    else:
        assert m is None and l is None
        assert_matches([to_numpy(out)], args, dtype, mode, lse=False)


# --- PyNative ----------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layouts", LAYOUTS, ids="-".join)
@pytest.mark.parametrize("dtype", DTYPES)
def test_pynative_matches_reference(dtype, layouts, mode):
    shape = SHAPES[2] if mode else SHAPES[0]
    args = make(shape, *layouts, dtype, seed=mode + 1, length_dtype=np.int64 if mode else np.int32)
    lse = layouts[1] != "BSND"
    check(sfa.sparse_flash_attention(**to_ms(args), sparse_mode=mode, return_softmax_lse=lse), args, dtype, mode, lse)


def test_pynative_inputs_from_pending_ops_and_reads_right_after():
    """Inputs are outputs of built-in ops issued just before (the data check must see their
    final values); built-in ops read the outputs right after the call."""
    args = make(SMALL, "BSND", "PA_BSND", "float32", seed=7)
    t = to_ms(args)
    for _ in range(30):
        out, m, l = sfa_ms.sparse_flash_attention(
            t["query"] * 1, t["key"] + 0, t["value"], t["sparse_indices"] + 0, args["scale_value"],
            block_table=t["block_table"] * 1, actual_seq_lengths_query=t["actual_seq_lengths_query"],
            actual_seq_lengths_kv=t["actual_seq_lengths_kv"] + 0, query_rope=t["query_rope"], key_rope=t["key_rope"],
            return_softmax_lse=True)
        assert_matches([(out + 0).asnumpy(), (m * 1).asnumpy(), (l * 1).asnumpy()], args, "float32", 3)


# --- Graph mode --------------------------------------------------------------------------------
def _jit(layouts, mode, sbs, scale, has=(True,) * 5):
    """An ms.jit function calling the op (optional tensors None where `has` says so) and reading
    its outputs with built-in ops."""
    @ms.jit
    def run(q, k, v, idx, bt, lq, lkv, qr, kr):
        opt = [x if h else None for x, h in zip((bt, lq, lkv, qr, kr), has)]
        out, m, l = sfa_ms.sparse_flash_attention(
            q, k, v, idx, scale, block_table=opt[0], actual_seq_lengths_query=opt[1], actual_seq_lengths_kv=opt[2],
            query_rope=opt[3], key_rope=opt[4], sparse_block_size=sbs, layout_query=layouts[0],
            layout_kv=layouts[1], sparse_mode=mode, return_softmax_lse=True)
        return out * 1, m, l
    return run


def _graph_args(t):
    return [t[n] for n in TENSORS] + [t.get(n) if t.get(n) is not None else t["query"] for n in OPTIONAL]


GRAPH_CASES = [(layouts, dtype, mode) for layouts in LAYOUTS for dtype in DTYPES for mode in MODES]


@pytest.mark.parametrize("layouts,dtype,mode", GRAPH_CASES, ids=["-".join(c[0]) + f"-{c[1]}-{c[2]}" for c in GRAPH_CASES])
def test_jit_matches_reference(layouts, dtype, mode):
    args = make(SMALL, *layouts, dtype, seed=11 + mode)
    has = tuple(args.get(n) is not None for n in OPTIONAL)
    outs = _jit(layouts, mode, SMALL.sbs, args["scale_value"], has)(*_graph_args(to_ms(args)))
    check(outs, args, dtype, mode, True)


class _Attention(nn.Cell):
    """A decode step's sparse attention in a GRAPH_MODE Cell: PA_BSND latent cache, value = key."""

    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def construct(self, query, cache, indices, table, lengths, query_rope, rope_cache):
        out, _, _ = sfa_ms.sparse_flash_attention(query, cache, cache, indices, self.scale, block_table=table,
                                                  actual_seq_lengths_kv=lengths, query_rope=query_rope,
                                                  key_rope=rope_cache)
        return out


@pytest.mark.parametrize("dtype", DTYPES)
def test_graph_mode_cell(dtype):
    ms.set_context(mode=ms.GRAPH_MODE)
    shape = SHAPES[1]
    for seed in range(3):  # one compiled graph, new data each step
        args = make(shape, "BSND", "PA_BSND", dtype, seed=20 + seed)
        net = _Attention(args["scale_value"]) if seed == 0 else net
        t = to_ms(args)
        out = net(t["query"], t["key"], t["sparse_indices"], t["block_table"], t["actual_seq_lengths_kv"],
                  t["query_rope"], t["key_rope"])
        assert_matches([to_numpy(out)], args, dtype, 3, lse=False)


# --- Bad inputs --------------------------------------------------------------------------------
def _bad(**changes):
    args = make(SMALL, "BSND", "PA_BSND", "float16", seed=3, tails=False)
    t = to_ms(args)
    t["scale_value"] = args["scale_value"]
    t.update(changes)
    return t


SHAPE_ERRORS = [  # what the graph compiler knows: the same exception at compile time
    ("layout", dict(layout_kv="BNSD"), ValueError, "layout_kv should be 'PA_BSND', 'BSND' or 'TND' but is 'BNSD'"),
    ("mode", dict(sparse_mode=2), ValueError, "sparse_mode should be 0"),
    ("dtype", dict(key=Tensor(np.zeros((11, 4, 1, 16), np.float32))), TypeError, "key should have dtype float16"),
    ("shape", dict(query_rope=Tensor(np.zeros((2, 4, 3, 4), np.float16))), ValueError, "query_rope should be BSND"),
    ("no table", dict(block_table=None), ValueError, "block_table is required"),
]
DATA_ERRORS = [  # what needs the data: PyNative at the next check point, a graph when it runs
    ("block id", dict(block_table=Tensor(np.full((2, 6), 99, np.int32))), IndexError,
     "block_table[0][0] = 99 is out of range"),
    ("length", dict(actual_seq_lengths_kv=Tensor(np.array([20, 1000], np.int32))), ValueError,
     "actual_seq_lengths_kv[1] = 1000 is beyond"),
]


@pytest.mark.parametrize("changes,exc,words", [c[1:] for c in SHAPE_ERRORS + DATA_ERRORS],
                         ids=[c[0] for c in SHAPE_ERRORS + DATA_ERRORS])
def test_pynative_bad_inputs(changes, exc, words):
    with pytest.raises(exc) as info:
        sfa.sparse_flash_attention(**_bad(**changes))
        ms_synchronize()  # lengths, block ids and indices are checked in MindSpore's queue
    assert str(info.value).startswith("sparse_flash_attention: ") and words in str(info.value), str(info.value)


@pytest.mark.parametrize("changes,exc,words", [c[1:] for c in DATA_ERRORS], ids=[c[0] for c in DATA_ERRORS])
def test_pynative_bad_data_raises_late_once(changes, exc, words):
    sfa.sparse_flash_attention(**_bad(**changes))  # returns: the data is not checked yet
    with pytest.raises(exc, match=re.escape("sparse_flash_attention: " + words)):
        check_errors()
    ms_synchronize()
    check_errors()


def _graph_call(t):
    layouts = (t.pop("layout_query", "BSND"), t.pop("layout_kv", "PA_BSND"))
    mode = t.pop("sparse_mode", 3)
    has = tuple(t.get(n) is not None for n in OPTIONAL)
    return _jit(layouts, mode, 1, t["scale_value"], has)(*_graph_args(t))


@pytest.mark.parametrize("changes,exc,words", [c[1:] for c in SHAPE_ERRORS], ids=[c[0] for c in SHAPE_ERRORS])
def test_jit_bad_inputs_at_compile_time(changes, exc, words):
    with pytest.raises(exc) as info:
        _graph_call(_bad(**changes))
    assert "sparse_flash_attention: " + words in str(info.value), str(info.value)


@pytest.mark.parametrize("changes,exc,words", [c[1:] for c in DATA_ERRORS], ids=[c[0] for c in DATA_ERRORS])
def test_jit_bad_data_fails_at_run_time(changes, exc, words):
    with pytest.raises(RuntimeError, match=rf"{exc.__name__}: sparse_flash_attention: ") as info:
        outs = _graph_call(_bad(**changes))
        [o.asnumpy() for o in outs]  # the graph runs asynchronously: its error surfaces here
    assert words in str(info.value), str(info.value)
