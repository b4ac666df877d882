"""weights with a trailing 1 ([B, S1, N1, 1] / [T1, N1, 1], as vllm-ascend and ms_custom_ops pass
them) are taken by the op itself on every backend: cpu (NumPy), emu, torch eager / Meta /
torch.compile and MindSpore PyNative, with the same result as the [B, S1, N1] / [T1, N1] form
and the reference; any other extra axis is refused naming both accepted shapes."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from ascend_ops.common.loader import load_native
from ascend_ops.lightning_indexer import lightning_indexer

from li_cases import Q_LAYOUTS, Shape, assert_topk, make, reference_rows

SHAPE = Shape((3, 2), (40, 9), 4, 16, 8, block_size=4, name="small")
EMU_SHAPE = Shape((2, 1), (40, 77), 8, 128, 16, block_size=16, name="emu-small")
DT = {"float16": None, "bfloat16": "bfloat16", "float32": None}


def with_trailing_one(args):
    return dict(args, weights=np.ascontiguousarray(args["weights"][..., None]))


@pytest.mark.parametrize("dtype", list(DT))
@pytest.mark.parametrize("layout_query", Q_LAYOUTS)
def test_cpu_takes_weights_with_a_trailing_one(layout_query, dtype):
    args = make(SHAPE, layout_query, "PA_BSND", dtype, seed=11)
    idx, val = lightning_indexer(**with_trailing_one(args), dtype=DT[dtype], sparse_mode=3, return_value=True)
    assert_topk(idx, val, reference_rows(args, dtype, 3), SHAPE.k)
    flat = lightning_indexer(**args, dtype=DT[dtype], sparse_mode=3, return_value=True)
    np.testing.assert_array_equal(idx, flat[0])
    np.testing.assert_array_equal(val, flat[1])


@pytest.mark.parametrize("layout_query", Q_LAYOUTS)
def test_emu_takes_weights_with_a_trailing_one(layout_query):
    if not load_native("ascend_ops.lightning_indexer", "core").HAS_EMU:
        pytest.skip("the emulator build is off (AOP_WITH_EMU)")
    args = make(EMU_SHAPE, layout_query, "PA_BSND", "bfloat16", seed=5)
    idx, val = lightning_indexer(**with_trailing_one(args), dtype="bfloat16", sparse_mode=3, return_value=True,
                                 backend="emu")
    assert_topk(idx, val, reference_rows(args, "bfloat16", 3), EMU_SHAPE.k)
    flat = lightning_indexer(**args, dtype="bfloat16", sparse_mode=3, return_value=True, backend="emu")
    np.testing.assert_array_equal(idx, flat[0])


@pytest.mark.parametrize("extra,layout_query", [((2,), "TND"), ((1, 1), "TND"), ((1, 1), "BSND")])
def test_other_extra_axes_are_refused(extra, layout_query):
    args = make(SHAPE, layout_query, "PA_BSND", "float32", seed=1)
    w = args["weights"]
    args["weights"] = np.ascontiguousarray(np.broadcast_to(w.reshape(w.shape + (1,) * len(extra)), w.shape + extra))
    want = r"\[T1, N1\] or \[T1, N1, 1\]" if layout_query == "TND" else r"\[B, S1, N1\] or \[B, S1, N1, 1\]"
    with pytest.raises(ValueError, match=r"lightning_indexer: weights should be " + want + " but has shape"):
        lightning_indexer(**args, sparse_mode=3)


def test_trailing_one_still_checks_n1():
    args = make(SHAPE, "TND", "PA_BSND", "float32", seed=1)
    args["weights"] = np.ascontiguousarray(args["weights"][:, :3, None])
    with pytest.raises(ValueError, match=r"weights should be \[T1, N1\] or \[T1, N1, 1\] with N1 \(from query\) = 4"):
        lightning_indexer(**args)


needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")


@needs_torch
@pytest.mark.parametrize("layout_query", Q_LAYOUTS)
def test_torch_eager_meta_and_compile(layout_query):
    import torch

    from ascend_ops.lightning_indexer import torch_ops  # noqa: F401  (registers the op)

    op = torch.ops.ascend_ops.lightning_indexer.default
    args = make(SHAPE, layout_query, "PA_BSND", "float16", seed=4)
    t = {k: torch.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v for k, v in with_trailing_one(args).items()}
    idx, val = op(**t, sparse_mode=3, return_value=True)
    assert_topk(idx.numpy(), val.numpy(), reference_rows(args, "float16", 3), SHAPE.k)
    meta = {k: v.to("meta") if isinstance(v, torch.Tensor) else v for k, v in t.items()}
    m_idx, m_val = op(**meta, sparse_mode=3, return_value=True)
    assert m_idx.device.type == "meta" and m_idx.shape == idx.shape and m_val.shape == val.shape

    def fn(query, key, weights, actual_seq_lengths_query, actual_seq_lengths_key, block_table):
        return op(query, key, weights, actual_seq_lengths_query=actual_seq_lengths_query,
                  actual_seq_lengths_key=actual_seq_lengths_key, block_table=block_table,
                  layout_query=layout_query, layout_key="PA_BSND", sparse_count=SHAPE.k, sparse_mode=3)[0]

    compiled = torch.compile(fn, fullgraph=True, dynamic=True)
    got = compiled(*(t[n] for n in ("query", "key", "weights", "actual_seq_lengths_query", "actual_seq_lengths_key",
                                    "block_table")))
    torch.testing.assert_close(got, idx, rtol=0, atol=0)


@pytest.mark.skipif(importlib.util.find_spec("mindspore") is None, reason="mindspore is not installed")
def test_mindspore_pynative(tmp_path, monkeypatch):
    import mindspore as ms

    import ascend_ops.lightning_indexer as li

    monkeypatch.chdir(tmp_path)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    args = make(SHAPE, "BSND", "PA_BSND", "float32", seed=8)
    t = {k: ms.Tensor(v) if isinstance(v, np.ndarray) else v for k, v in with_trailing_one(args).items()}
    idx, val = li.lightning_indexer(**t, sparse_mode=3, return_value=True)
    assert_topk(idx.asnumpy(), val.asnumpy(), reference_rows(args, "float32", 3), SHAPE.k)
