"""lightning_indexer_quant with MindSpore tensors: PyNative, ms.jit and a GRAPH_MODE Cell.

Golden comparisons (the spec's tolerance) in PyNative for every layout pair and both sparse
modes; ms.jit on PA_BSND / BSND / TND; a decode Cell run on new data; bad inputs raise the
documented exception (PyNative: shapes at the call, data such as a negative key scale late,
through check_errors; graph: shapes at compile time, data at run time as RuntimeError)."""
from __future__ import annotations

import numpy as np
import pytest

ms = pytest.importorskip("mindspore", reason="mindspore is not installed")  # before the adapter
from mindspore import Tensor, nn  # noqa: E402

import ascend_ops.lightning_indexer_quant as liq  # noqa: E402
from ascend_ops.common import check_errors  # noqa: E402
from ascend_ops.devkit.testing import ms_synchronize  # noqa: E402
from ascend_ops.lightning_indexer_quant import ms as liq_ms  # noqa: E402
from liq_cases import K_LAYOUTS, MODES, Q_LAYOUTS, SHAPES, Shape, assert_topk, make, reference_rows  # noqa: E402

TENSORS = ("query", "key", "weights", "query_dequant_scale", "key_dequant_scale", "actual_seq_lengths_query",
           "actual_seq_lengths_key", "block_table")
SMALL = Shape((3, 2), (20, 9), 4, 16, 8, block_size=4, name="small")


@pytest.fixture(autouse=True)
def _pynative_and_tmp_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


def to_ms(args: dict) -> dict:
    return {k: (Tensor(v) if isinstance(v, np.ndarray) else v) for k, v in args.items()}


def check_outputs(idx, val, args, mode, k, return_value) -> None:
    assert idx.dtype == ms.int32
    if return_value:
        assert val.dtype == ms.float32 and val.shape == idx.shape
    else:
        assert val is None
    assert_topk(idx.asnumpy(), val.asnumpy() if return_value else None, reference_rows(args, mode), k)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layout_key", K_LAYOUTS)
@pytest.mark.parametrize("layout_query", Q_LAYOUTS)
def test_pynative_matches_reference(layout_query, layout_key, mode):
    shape = SHAPES[2] if mode else SHAPES[1]
    args = make(shape, layout_query, layout_key, weights_dtype="float16", scale_dtype="float16", seed=mode + 1,
                length_dtype=np.int64 if mode else np.int32)
    return_value = layout_key != "BSND"
    idx, val = liq.lightning_indexer_quant(**to_ms(args), sparse_mode=mode, return_value=return_value)
    check_outputs(idx, val, args, mode, shape.k, return_value)


def _jit(layout_query, layout_key, k, mode):
    @ms.jit
    def run(q, kk, w, qs, ks, lq, lk, bt):
        idx, val = liq_ms.lightning_indexer_quant(q, kk, w, qs, ks, lq, lk, bt, layout_query=layout_query,
                                                  layout_key=layout_key, sparse_count=k, sparse_mode=mode,
                                                  return_value=True)
        return idx * 1, val
    return run


def _positional(t: dict):
    # BSND / TND keys have no block table: any tensor in its place is ignored only if None, so
    # the graph is built without it (a separate jit per layout pair).
    return tuple(t.get(n) for n in TENSORS)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layouts", [("BSND", "PA_BSND"), ("BSND", "BSND"), ("TND", "TND")], ids=str)
def test_jit_matches_reference(layouts, mode):
    args = make(SMALL, *layouts, seed=11 + mode)
    t = to_ms(args)
    if layouts[1] == "PA_BSND":
        fn = _jit(*layouts, SMALL.k, mode)
        idx, val = fn(*_positional(t))
    else:
        @ms.jit
        def fn(q, kk, w, qs, ks, lq, lk):
            idx, val = liq_ms.lightning_indexer_quant(q, kk, w, qs, ks, lq, lk, None, layout_query=layouts[0],
                                                      layout_key=layouts[1], sparse_count=SMALL.k, sparse_mode=mode,
                                                      return_value=True)
            return idx * 1, val
        idx, val = fn(*_positional(t)[:7])
    check_outputs(idx, val, args, mode, SMALL.k, True)


class _Indexer(nn.Cell):
    """A decode step's indexer in a GRAPH_MODE Cell: PA_BSND keys, no query lengths."""

    def __init__(self, k):
        super().__init__()
        self.k = k

    def construct(self, query, key, weights, qs, ks, lengths, table):
        return liq_ms.lightning_indexer_quant(query, key, weights, qs, ks, None, lengths, table, sparse_count=self.k,
                                              sparse_mode=3, return_value=True)


def test_graph_mode_cell():
    ms.set_context(mode=ms.GRAPH_MODE)
    net = _Indexer(SHAPES[0].k)
    for seed in range(3):  # one compiled graph, new data each step
        args = make(SHAPES[0], "BSND", "PA_BSND", weights_dtype="float16", scale_dtype="float16", seed=20 + seed)
        args.pop("actual_seq_lengths_query")
        t = to_ms(args)
        idx, val = net(t["query"], t["key"], t["weights"], t["query_dequant_scale"], t["key_dequant_scale"],
                       t["actual_seq_lengths_key"], t["block_table"])
        check_outputs(idx, val, args, 3, SHAPES[0].k, True)


def _bad(**changes):
    t = to_ms(make(SMALL, "BSND", "PA_BSND", seed=3))
    t.update(changes)
    return t


SHAPE_ERRORS = [
    ("dtype", dict(query=Tensor(np.zeros((2, 4, 4, 16), np.float16))), TypeError, "query should have dtype int8"),
    ("mode", dict(query_quant_mode=1), ValueError, "query_quant_mode should be 0"),
    ("qs-shape", dict(query_dequant_scale=Tensor(np.ones((2, 4, 2), np.float32))), ValueError,
     "query_dequant_scale should have shape"),
]


def _negative_ks():
    t = make(SMALL, "BSND", "PA_BSND", seed=3)
    t["key_dequant_scale"] = -t["key_dequant_scale"]
    return dict(key_dequant_scale=Tensor(t["key_dequant_scale"]))


DATA_ERRORS = [
    ("negative-ks", _negative_ks(), ValueError, "key_dequant_scale should be finite and >= 0"),
    ("block id", dict(block_table=Tensor(np.full((2, 7), 99, np.int32))), IndexError, "block_table[0][0] = 99"),
]


@pytest.mark.parametrize("changes,exc,words", [c[1:] for c in SHAPE_ERRORS + DATA_ERRORS],
                         ids=[c[0] for c in SHAPE_ERRORS + DATA_ERRORS])
def test_pynative_bad_inputs(changes, exc, words):
    with pytest.raises(exc) as info:
        liq.lightning_indexer_quant(**_bad(**changes))
        ms_synchronize()
        check_errors()
    assert str(info.value).startswith("lightning_indexer_quant: ") and words in str(info.value), str(info.value)


@pytest.mark.parametrize("changes,exc,words", [c[1:] for c in SHAPE_ERRORS if "mode" not in c[0]],
                         ids=[c[0] for c in SHAPE_ERRORS if "mode" not in c[0]])
def test_jit_bad_inputs_at_compile_time(changes, exc, words):
    with pytest.raises(exc) as info:
        _jit("BSND", "PA_BSND", SMALL.k, 3)(*_positional(_bad(**changes)))
    assert "lightning_indexer_quant: " + words in str(info.value), str(info.value)


@pytest.mark.parametrize("changes,exc,words", [c[1:] for c in DATA_ERRORS], ids=[c[0] for c in DATA_ERRORS])
def test_jit_bad_data_fails_at_run_time(changes, exc, words):
    with pytest.raises(RuntimeError, match=rf"{exc.__name__}: lightning_indexer_quant: ") as info:
        outs = _jit("BSND", "PA_BSND", SMALL.k, 3)(*_positional(_bad(**changes)))
        [o.asnumpy() for o in outs]
    assert words in str(info.value), str(info.value)
