"""lightning_indexer with MindSpore tensors: PyNative, ms.jit and GRAPH_MODE Cells.

Golden comparisons (li_cases' rule) in PyNative for every layout pair, both sparse modes and
float16 / bfloat16 / float32, with and without sparse_values; the same through ms.jit functions
and GRAPH_MODE Cells on PA_BSND, BSND and TND; bad inputs raise the documented exception naming
the argument (PyNative: at the call; graph: at compile time for layouts, dtypes and shapes, at
run time as RuntimeError carrying ours for lengths and block ids); outputs of pending built-in
ops as inputs, and built-in ops reading the outputs right after the call (ordering).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

ms = pytest.importorskip("mindspore", reason="mindspore is not installed")  # before the adapter
from mindspore import Tensor, nn  # noqa: E402

import ascend_ops.lightning_indexer as li  # noqa: E402
from ascend_ops.common import check_errors  # noqa: E402
from ascend_ops.devkit.testing import from_bf16_bits, ms_synchronize  # noqa: E402
from ascend_ops.lightning_indexer import ms as li_ms  # noqa: E402
from li_cases import (DTYPES, K_LAYOUTS, MODES, Q_LAYOUTS, SHAPES, Shape, assert_topk, compress, make,  # noqa: E402
                      reference_rows)

TENSORS = ("query", "key", "weights", "actual_seq_lengths_query", "actual_seq_lengths_key", "block_table")
SMALL = Shape((3, 2), (20, 9), 4, 16, 8, block_size=4, name="small")


@pytest.fixture(autouse=True)
def _pynative_and_tmp_cwd(tmp_path, monkeypatch):
    """Each test starts in PyNative; MindSpore's compile reports (analyze_fail.ir) go to tmp."""
    monkeypatch.chdir(tmp_path)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


def to_ms(args: dict) -> dict:
    """li_cases' NumPy arguments as MindSpore tensors (bfloat16 bit patterns -> bfloat16)."""
    out = {}
    for name, value in args.items():
        if isinstance(value, np.ndarray):
            value = (Tensor(from_bf16_bits(value), dtype=ms.bfloat16) if value.dtype == np.uint16
                     else Tensor(value))
        out[name] = value
    return out


def positional(t: dict):
    return tuple(t.get(n) for n in TENSORS)


def check_outputs(idx, val, args, dtype, mode, k, return_value) -> None:
    assert idx.dtype == ms.int32
    if return_value:
        assert val.dtype == ms.float32 and val.shape == idx.shape
    else:
        assert val is None
    assert_topk(idx.asnumpy(), val.asnumpy() if return_value else None, reference_rows(args, dtype, mode), k)


# --- PyNative ----------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layout_key", K_LAYOUTS)
@pytest.mark.parametrize("layout_query", Q_LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_pynative_matches_reference(dtype, layout_query, layout_key, mode):
    # Through the public API, which hands MindSpore tensors to ascend_ops.lightning_indexer.ms.
    shape = SHAPES[2] if mode else SHAPES[1]
    args = make(shape, layout_query, layout_key, dtype, seed=mode + 1, length_dtype=np.int64 if mode else np.int32)
    return_value = layout_key != "BSND"
    idx, val = li.lightning_indexer(**to_ms(args), sparse_mode=mode, return_value=return_value)
    check_outputs(idx, val, args, dtype, mode, shape.k, return_value)


@pytest.mark.parametrize("shape", [SHAPES[0], SHAPES[4], SHAPES[5]], ids=str)
def test_pynative_shapes(shape):
    args = make(shape, "BSND", "PA_BSND", "bfloat16", seed=5)
    idx, val = li_ms.lightning_indexer(**to_ms(args), return_value=True)
    check_outputs(idx, val, args, "bfloat16", 3, shape.k, True)


def test_pynative_optional_tensors_left_out():
    """BSND keys without lengths: every query row and every key is used."""
    args = make(SHAPES[2], "BSND", "BSND", "float16", seed=2)
    args.pop("actual_seq_lengths_query")
    args.pop("actual_seq_lengths_key")
    idx, val = li_ms.lightning_indexer(**to_ms(args), sparse_mode=0, return_value=True)
    check_outputs(idx, val, args, "float16", 0, SHAPES[2].k, True)


def test_pynative_inputs_from_pending_ops_and_reads_right_after():
    """Inputs are outputs of built-in ops issued just before (the data check must see their
    final values); built-in ops read the outputs right after the call."""
    args = make(SMALL, "BSND", "PA_BSND", "float32", seed=7)
    t = to_ms(args)
    for _ in range(50):
        lengths = t["actual_seq_lengths_key"] + 0
        table = t["block_table"] * 1
        idx, val = li_ms.lightning_indexer(t["query"] * 1, t["key"] + 0, t["weights"], t["actual_seq_lengths_query"],
                                           lengths, table, sparse_count=SMALL.k, return_value=True)
        read_idx, read_val = (idx + 0).asnumpy(), (val * 1).asnumpy()
        assert_topk(read_idx, read_val, reference_rows(args, "float32", 3), SMALL.k)


def test_eager_call_under_graph_mode_context():
    # Outside a Cell / jit the call is eager even when the context says GRAPH_MODE.
    args = make(SMALL, "TND", "TND", "float16", seed=8)
    ms.set_context(mode=ms.GRAPH_MODE)
    idx, val = li_ms.lightning_indexer(**to_ms(args), sparse_mode=0)
    check_outputs(idx, val, args, "float16", 0, SMALL.k, False)


# --- Graph mode --------------------------------------------------------------------------------
def _jit(layout_query, layout_key, k, mode, return_value, has=(True, True, True)):
    """An ms.jit function calling the op; optional tensors left out (None) where `has` says so.
    It returns the indices, the scores (or a 0-d placeholder) and whether the scores were None:
    a graph whose outputs include None next to a Custom op's output fails to run in MindSpore
    2.10 (see the README)."""
    @ms.jit
    def run(q, kk, w, lq, lk, bt):
        idx, val = li_ms.lightning_indexer(q, kk, w, lq if has[0] else None, lk if has[1] else None,
                                           bt if has[2] else None, layout_query=layout_query, layout_key=layout_key,
                                           sparse_count=k, sparse_mode=mode, return_value=return_value)
        if val is None:
            return idx * 1, idx.sum(), True  # a built-in op reads the output right after
        return idx * 1, val, False
    return run


GRAPH_CASES = [(lq, lk, dtype, mode) for lq, lk in [("BSND", "PA_BSND"), ("BSND", "BSND"), ("TND", "TND")]
               for dtype in DTYPES for mode in MODES]


@pytest.mark.parametrize("layout_query,layout_key,dtype,mode", GRAPH_CASES, ids=["-".join(map(str, c))
                                                                                 for c in GRAPH_CASES])
def test_jit_matches_reference(layout_query, layout_key, dtype, mode):
    args = make(SMALL, layout_query, layout_key, dtype, seed=11 + mode)
    return_value = dtype != "float32"
    idx, val, none = _jit(layout_query, layout_key, SMALL.k, mode, return_value)(*positional(to_ms(args)))
    assert none is (not return_value)
    check_outputs(idx, val if return_value else None, args, dtype, mode, SMALL.k, return_value)


class _Indexer(nn.Cell):
    """A decode step's indexer in a GRAPH_MODE Cell: PA_BSND keys, no query lengths."""

    def __init__(self, k):
        super().__init__()
        self.k = k

    def construct(self, query, key, weights, lengths, table):
        idx, val = li_ms.lightning_indexer(query, key, weights, None, lengths, table, sparse_count=self.k,
                                           sparse_mode=3, return_value=True)
        return idx, val


@pytest.mark.parametrize("dtype", DTYPES)
def test_graph_mode_cell(dtype):
    ms.set_context(mode=ms.GRAPH_MODE)
    net = _Indexer(SHAPES[0].k)
    for seed in range(3):  # one compiled graph, new data each step
        args = make(SHAPES[0], "BSND", "PA_BSND", dtype, seed=20 + seed)
        args.pop("actual_seq_lengths_query")
        t = to_ms(args)
        idx, val = net(t["query"], t["key"], t["weights"], t["actual_seq_lengths_key"], t["block_table"])
        check_outputs(idx, val, args, dtype, 3, SHAPES[0].k, True)


# --- DeepSeek-V4: compressed keys (cmp_ratio, cmp_residual_k) ---------------------------------
V4 = Shape((1, 2, 9), (300, 40, 2), 8, 32, 64, block_size=16, name="v4")  # batch 2: from scratch


@pytest.mark.parametrize("ratio", [4, 128])
@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_pynative_compressed_keys(dtype, ratio):
    args = compress(make(V4, "TND", "PA_BSND", dtype, seed=ratio), ratio, [3, 1, 1])
    idx, val = li.lightning_indexer(**to_ms(args), sparse_mode=3, return_value=True)
    check_outputs(idx, val, args, dtype, 3, V4.k, True)


def _v4_jit(ratio):
    @ms.jit
    def run(q, k, w, lq, lk, bt, residual):
        idx, val = li_ms.lightning_indexer(q, k, w, lq, lk, bt, residual, layout_query="TND", layout_key="PA_BSND",
                                           sparse_count=V4.k, sparse_mode=3, cmp_ratio=ratio, return_value=True)
        return idx * 1, val
    return run


def test_jit_compressed_keys():
    args = compress(make(V4, "TND", "PA_BSND", "float16", seed=1), 4, [0, 1, 1])
    t = to_ms(args)
    idx, val = _v4_jit(4)(*(t[n] for n in TENSORS), t["cmp_residual_k"])
    check_outputs(idx, val, args, "float16", 3, V4.k, True)


def test_compressed_keys_bad_residual():
    """A residual outside [0, cmp_ratio) is data: PyNative raises it late (check_errors), a
    graph when it runs; a missing one is known at the call / at compile time."""
    t = to_ms(compress(make(V4, "TND", "PA_BSND", "float16"), 4, [0, 4, 1]))
    li.lightning_indexer(**t)  # returns: the data is not checked yet
    with pytest.raises(ValueError, match=re.escape("lightning_indexer: cmp_residual_k[1] = 4 is out of range")):
        check_errors()
    ms_synchronize()
    with pytest.raises(RuntimeError, match=r"ValueError: lightning_indexer: cmp_residual_k\[1\] = 4"):
        outs = _v4_jit(4)(*(t[n] for n in TENSORS), t["cmp_residual_k"])
        [o.asnumpy() for o in outs]
    with pytest.raises(ValueError, match="cmp_residual_k is required"):
        li.lightning_indexer(**dict(t, cmp_residual_k=None))


# --- Bad inputs --------------------------------------------------------------------------------
def _bad(**changes):
    t = to_ms(make(SMALL, "BSND", "PA_BSND", "float16", seed=3))
    t.update(changes)
    return t


SHAPE_ERRORS = [  # what the graph compiler knows: the same exception at compile time
    ("layout", dict(layout_key="BNSD"), ValueError, "layout_key should be 'PA_BSND', 'BSND' or 'TND' but is 'BNSD'"),
    ("layout-query", dict(layout_query="PA_BSND"), ValueError, "layout_query should be 'BSND' or 'TND'"),
    ("mode", dict(sparse_mode=2), ValueError, "sparse_mode should be 0 (no mask) or 3"),
    ("count", dict(sparse_count=9000), ValueError, "sparse_count should be in [1, 8192]"),
    ("dtype", dict(key=Tensor(np.zeros((9, 4, 1, 16), np.float32))), TypeError, "key should have dtype float16"),
    ("lengths-dtype", dict(actual_seq_lengths_key=Tensor(np.array([20, 9], np.int16))), TypeError,
     "actual_seq_lengths_key should have dtype int32 or int64"),
    ("shape", dict(weights=Tensor(np.zeros((2, 4, 3), np.float16))), ValueError,
     "weights should be [B, S1, N1] or [B, S1, N1, 1] with N1 (from query) = 4"),
    ("no table", dict(block_table=None), ValueError, "block_table is required"),
]
DATA_ERRORS = [  # what needs the data: PyNative at the call, a graph when it runs
    ("block id", dict(block_table=Tensor(np.full((2, 7), 99, np.int32))), IndexError,
     "block_table[0][0] = 99 is out of range"),
    ("length", dict(actual_seq_lengths_key=Tensor(np.array([20, 1000], np.int32))), ValueError,
     "actual_seq_lengths_key[1] = 1000 is beyond"),
]


@pytest.mark.parametrize("changes,exc,words", [c[1:] for c in SHAPE_ERRORS + DATA_ERRORS],
                         ids=[c[0] for c in SHAPE_ERRORS + DATA_ERRORS])
def test_pynative_bad_inputs(changes, exc, words):
    t = _bad(**changes)
    with pytest.raises(exc) as info:
        li.lightning_indexer(**t)
        ms_synchronize()  # lengths and block ids are checked in MindSpore's queue
    assert str(info.value).startswith("lightning_indexer: ") and words in str(info.value), str(info.value)


@pytest.mark.parametrize("changes,exc,words", [c[1:] for c in DATA_ERRORS], ids=[c[0] for c in DATA_ERRORS])
def test_pynative_bad_data_raises_late_once(changes, exc, words):
    """Data errors leave the call, then raise once: here through check_errors()."""
    li.lightning_indexer(**_bad(**changes))  # returns: the data is not checked yet
    with pytest.raises(exc, match=re.escape("lightning_indexer: " + words)):
        check_errors()
    ms_synchronize()
    check_errors()


def _graph_call(t):
    layouts = (t.pop("layout_query", "BSND"), t.pop("layout_key", "PA_BSND"))
    mode, k = t.pop("sparse_mode", 3), t.pop("sparse_count", SMALL.k)
    has = tuple(t.get(n) is not None for n in TENSORS[3:])
    return _jit(*layouts, k, mode, True, has)(*(t[n] if t.get(n) is not None else t["query"] for n in TENSORS))


@pytest.mark.parametrize("changes,exc,words", [c[1:] for c in SHAPE_ERRORS], ids=[c[0] for c in SHAPE_ERRORS])
def test_jit_bad_inputs_at_compile_time(changes, exc, words):
    with pytest.raises(exc) as info:
        _graph_call(_bad(**changes))
    assert "lightning_indexer: " + words in str(info.value), str(info.value)


@pytest.mark.parametrize("changes,exc,words", [c[1:] for c in DATA_ERRORS], ids=[c[0] for c in DATA_ERRORS])
def test_jit_bad_data_fails_at_run_time(changes, exc, words):
    with pytest.raises(RuntimeError, match=rf"{exc.__name__}: lightning_indexer: ") as info:
        outs = _graph_call(_bad(**changes))
        [o.asnumpy() for o in outs[:2]]  # the graph runs asynchronously: its error surfaces here
    assert words in str(info.value), str(info.value)


def test_pynative_non_cpu_free_refusals():
    """MindSpore-only refusals: a complex dtype, NumPy-only options."""
    with pytest.raises(TypeError, match="lightning_indexer: weights has dtype"):
        li_ms.lightning_indexer(**_bad(weights=Tensor(np.zeros((2, 4, 4), np.complex64))))
    with pytest.raises(ValueError, match="NumPy arrays only"):
        li.lightning_indexer(**_bad(), backend="cpu")


def test_graph_runs_the_aot_kernel_not_the_pynative_entry(monkeypatch):
    """In a graph the op is the aot primitive: the PyNative entry is never called."""
    real = li_ms._native

    class NoPyNative:
        def __getattr__(self, name):
            if name == "lightning_indexer":
                raise AssertionError("the PyNative entry was called from a graph")
            return getattr(real, name)

    monkeypatch.setattr(li_ms, "_native", NoPyNative())
    args = make(SMALL, "BSND", "PA_BSND", "float16", seed=30)
    idx, val, _ = _jit("BSND", "PA_BSND", SMALL.k, 3, True)(*positional(to_ms(args)))
    check_outputs(idx, val, args, "float16", 3, SMALL.k, True)
