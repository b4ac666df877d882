"""The lightning indexer's call forms in ascend_ops.compat: torch_npu's and vllm-ascend's current
pair form, the old single-tensor form under its own name, custom_pypto's and ms_custom_ops'.
Each source's documented example (or its callers' exact line) and its tests' shapes, written by
us from their documentation, checked against our NumPy reference with the op README's rule
(float32 accumulation: scores of the returned keys within 1e-5 * M of the reference's top-K)."""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
needs_ms = pytest.mark.skipif(importlib.util.find_spec("mindspore") is None, reason="mindspore is not installed")
NO_LIMIT = 9223372036854775807


def assert_matches_reference(idx, inputs, layout_query, layout_key, sparse_count, sparse_mode=3):
    """Every row: min(K, visible) distinct visible keys then -1, whose float64 reference scores
    are the reference's top-K within tol = 1e-5 * M (M the row magnitude)."""
    from ascend_ops.lightning_indexer import reference

    a = {k: np.asarray(v, dtype=np.float64) if k in ("query", "key", "weights") else v for k, v in inputs.items()}
    if a["weights"].ndim == a["query"].ndim:  # the reference takes the spec's [.., N1]
        a["weights"] = a["weights"][..., 0]
    idx = np.asarray(idx)
    for row in reference.rows(**a, layout_query=layout_query, layout_key=layout_key, sparse_mode=sparse_mode):
        s, got = row.scores, idx[row.out]
        kk = min(sparse_count, len(s))
        assert (got[kk:] == -1).all() and len(set(got[:kk].tolist())) == kk and (got[:kk] >= 0).all()
        assert (got[:kk] < len(s)).all()
        np.testing.assert_allclose(s[got[:kk]], np.sort(s)[::-1][:kk], rtol=0, atol=1e-5 * row.magnitude)


def _bf16_numpy(t):
    import torch

    return t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()


# --- torch_npu ---------------------------------------------------------------------------------
def _torch_npu_documented_inputs(torch):
    """op-plugin's single-op example, exactly its sizes: b 1, s1 1, s2 8192, N1 64, N2 1, D 128,
    block_size 256, bfloat16 uniform(-10, 10) query / key, uniform(-1, 1) weights."""
    rng = np.random.default_rng(0)
    b, s1, s2, n1, n2, d, block_size = 1, 1, 8192, 64, 1, 128, 256
    return dict(
        query=torch.tensor(rng.uniform(-10, 10, (b, s1, n1, d))).to(torch.bfloat16),
        key=torch.tensor(rng.uniform(-10, 10, (b * (s2 // block_size), block_size, n2, d))).to(torch.bfloat16),
        weights=torch.tensor(rng.uniform(-1, 1, (b, s1, n1))).to(torch.bfloat16),
        actual_seq_lengths_query=torch.tensor(np.full(b, s1)).to(torch.int32),
        actual_seq_lengths_key=torch.tensor(np.full(b, s2)).to(torch.int32),
        block_table=torch.tensor([range(b * s2 // block_size)], dtype=torch.int32).reshape(b, -1))


@needs_torch
def test_torch_npu_documented_example():
    import torch

    from ascend_ops.compat import torch_npu
    from ascend_ops.lightning_indexer import lightning_indexer

    t = _torch_npu_documented_inputs(torch)
    sparse_indices, sparse_values = torch_npu.npu_lightning_indexer(
        t["query"], t["key"], t["weights"], actual_seq_lengths_query=t["actual_seq_lengths_query"],
        actual_seq_lengths_key=t["actual_seq_lengths_key"], block_table=t["block_table"], layout_query="BSND",
        layout_key="PA_BSND", sparse_count=2048, sparse_mode=3)
    assert sparse_indices.shape == (1, 1, 1, 2048) and sparse_indices.dtype == torch.int32
    assert sparse_values.shape == (0,) and sparse_values.dtype == torch.bfloat16  # op-plugin: [0], query's dtype
    want, _ = lightning_indexer(**t, layout_query="BSND", layout_key="PA_BSND", sparse_count=2048, sparse_mode=3)
    assert torch.equal(sparse_indices, want)
    assert_matches_reference(sparse_indices, {k: _bf16_numpy(v) for k, v in t.items()}, "BSND", "PA_BSND", 2048)


@needs_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_torch_npu_return_value_in_query_dtype(dtype):
    """return_value=True: the scores in query's dtype (op-plugin allocates them so), -inf at -1;
    equal to our op's float32 scores rounded once."""
    import torch

    from ascend_ops.compat import torch_npu
    from ascend_ops.lightning_indexer import lightning_indexer

    t = _small_tnd(torch, getattr(torch, dtype), trailing_one=False)
    kw = dict(layout_query="TND", layout_key="PA_BSND", sparse_count=16, sparse_mode=3)
    idx, val = torch_npu.npu_lightning_indexer(**t, **kw, return_value=True)
    want_idx, want_val = lightning_indexer(**t, **kw, return_value=True)
    assert val.dtype == getattr(torch, dtype) and val.shape == idx.shape
    assert torch.equal(idx, want_idx) and torch.equal(val, want_val.to(val.dtype))
    assert torch.isinf(val[idx == -1]).all()


@needs_torch
@pytest.mark.parametrize("arg", ["pre_tokens", "next_tokens"])
@pytest.mark.parametrize("module", ["torch_npu", "vllm_ascend"])
def test_pre_and_next_tokens_take_only_the_default(module, arg):
    import torch

    fn = importlib.import_module(f"ascend_ops.compat.{module}").npu_lightning_indexer
    t = _small_tnd(torch, torch.float16)
    kw = dict(layout_query="TND", layout_key="PA_BSND", sparse_count=8)
    fn(**t, **kw, **{arg: NO_LIMIT})
    with pytest.raises(ValueError, match=rf"^npu_lightning_indexer: {arg} should be {NO_LIMIT} .* but is 2048$"):
        fn(**t, **kw, **{arg: 2048})


@needs_torch
def test_torch_npu_defaults_are_torch_npus():
    """layout_key defaults to "BSND" there (a paged key then fails in our op's validation, as a
    [num_blocks, block_size, 1, D] key is no BSND key of B batches); keyword-only after weights."""
    import torch

    from ascend_ops.compat import torch_npu

    t = _torch_npu_documented_inputs(torch)
    with pytest.raises(ValueError, match=r"^lightning_indexer: key should be BSND"):
        torch_npu.npu_lightning_indexer(**t)
    with pytest.raises(TypeError):
        torch_npu.npu_lightning_indexer(t["query"], t["key"], t["weights"], t["actual_seq_lengths_query"])


# --- vllm-ascend ---------------------------------------------------------------------------------
def _small_tnd(torch, dtype, tokens=(2, 3), trailing_one=True, seed=3):
    """vllm-ascend's SFA indexer inputs in small: TND query (cumulative ends), the PA_BSND indexer
    key cache ``kv_cache[2]`` [num_blocks, block_size, 1, D], weights [T, N1, 1]."""
    gen = torch.Generator().manual_seed(seed)
    n1, d, block_size, blocks = 4, 16, 16, 6
    t = sum(tokens)
    lengths = [20, 37, 9, 5, 30][:len(tokens)]
    table = torch.tensor([[4, 1, 0], [2, 5, 3], [0, 1, 2], [3, 4, 5], [5, 4, 3]][:len(tokens)], dtype=torch.int32)
    return dict(query=torch.randn(t, n1, d, generator=gen).to(dtype),
                key=torch.randn(blocks, block_size, 1, d, generator=gen).to(dtype),
                weights=torch.rand((t, n1, 1) if trailing_one else (t, n1), generator=gen).to(dtype),
                actual_seq_lengths_query=torch.tensor(np.cumsum(tokens), dtype=torch.int32),
                actual_seq_lengths_key=torch.tensor(lengths, dtype=torch.int32), block_table=table)


@needs_torch
@pytest.mark.parametrize("tokens", [(1,), (1, 1), (2, 3)], ids=["T=1", "T=2", "T=5"])
def test_vllm_ascend_device_op_line(tokens):
    """vllm_ascend/device/device_op.py (2026-08) exactly: ``topk_indices, _ =
    torch.ops._C_ascend.npu_lightning_indexer(query=, key=, weights=, ..., layout_query="TND",
    layout_key="PA_BSND", sparse_count=2048, sparse_mode=3)``. Regression: with the old
    single-tensor return, T = 2 unpacked the two rows of indices silently (T = 1 and 5 raised)."""
    import torch

    from ascend_ops.compat import vllm_ascend

    q_li = _small_tnd(torch, torch.bfloat16, tokens)
    topk_indices, _ = vllm_ascend.npu_lightning_indexer(
        query=q_li["query"], key=q_li["key"], weights=q_li["weights"],
        actual_seq_lengths_query=q_li["actual_seq_lengths_query"],
        actual_seq_lengths_key=q_li["actual_seq_lengths_key"], block_table=q_li["block_table"],
        layout_query="TND", layout_key="PA_BSND", sparse_count=2048, sparse_mode=3)
    assert topk_indices.shape == (sum(tokens), 1, 2048) and topk_indices.dtype == torch.int32
    assert_matches_reference(topk_indices, {k: _bf16_numpy(v) for k, v in q_li.items()}, "TND", "PA_BSND", 2048)


@needs_torch
def test_vllm_ascend_unit_test_shapes():
    """vllm-ascend's tests/ut/attention/a2/test_sfa_v1.py shapes: batch 1, seq_q 4, N1 4, N2 1,
    D 128, float16, BSND / BSND, sparse_count 2048: a pair of [1, 4, 1, 2048] tensors, int32 and
    query's dtype (return_value=True)."""
    import torch

    from ascend_ops.compat import vllm_ascend

    gen = torch.Generator().manual_seed(0)
    query = torch.randn(1, 4, 4, 128, generator=gen, dtype=torch.float16)
    key = torch.randn(1, 4, 1, 128, generator=gen, dtype=torch.float16)
    weights = torch.randn(1, 4, 4, generator=gen, dtype=torch.float16)
    idx, values = vllm_ascend.npu_lightning_indexer(query=query, key=key, weights=weights, layout_query="BSND",
                                                    layout_key="BSND", sparse_count=2048, sparse_mode=3,
                                                    return_value=True)
    assert idx.shape == values.shape == (1, 4, 1, 2048)
    assert idx.dtype == torch.int32 and values.dtype == torch.float16
    assert_matches_reference(idx, dict(query=query.numpy(), key=key.numpy(), weights=weights.numpy()), "BSND",
                             "BSND", 2048)


@needs_torch
def test_the_old_single_tensor_form_is_named_legacy():
    """The old form returns the indices alone and only under ``npu_lightning_indexer_legacy``;
    the current name returns the pair whatever T is."""
    import torch

    from ascend_ops.compat import vllm_ascend

    t = _small_tnd(torch, torch.float16, (1, 1))
    kw = dict(layout_query="TND", layout_key="PA_BSND", sparse_count=8, sparse_mode=3)
    old = vllm_ascend.npu_lightning_indexer_legacy(**t, **kw)
    new = vllm_ascend.npu_lightning_indexer(**t, **kw)
    assert isinstance(old, torch.Tensor) and old.shape == (2, 1, 8)
    assert isinstance(new, tuple) and len(new) == 2 and torch.equal(new[0], old) and new[1].shape == (0,)


@needs_torch
def test_pair_form_compiles_without_graph_breaks():
    import torch
    from torch._dynamo.utils import counters

    from ascend_ops.compat import torch_npu

    t = _small_tnd(torch, torch.float16)

    def fn(query, key, weights, actual_seq_lengths_query, actual_seq_lengths_key, block_table):
        idx, _ = torch_npu.npu_lightning_indexer(
            query, key, weights, actual_seq_lengths_query=actual_seq_lengths_query,
            actual_seq_lengths_key=actual_seq_lengths_key, block_table=block_table, layout_query="TND",
            layout_key="PA_BSND", sparse_count=8, sparse_mode=3)
        return idx

    torch._dynamo.reset()
    counters.clear()
    got = torch.compile(fn, fullgraph=True, dynamic=True)(**t)
    assert not counters["graph_break"]
    assert torch.equal(got, fn(**t))


# --- custom_pypto ---------------------------------------------------------------------------------
@needs_torch
def test_custom_pypto_returns_the_indices_alone():
    """custom_pypto's callers: ``topk_indices = torch.ops.custom_pypto.npu_lightning_indexer_pto(
    **li_input_kwargs)`` then ``.view(-1, 1, index_topk)``."""
    import torch

    from ascend_ops.compat import custom_pypto

    t = _small_tnd(torch, torch.float16)
    got = custom_pypto.npu_lightning_indexer_pto(**t, layout_query="TND", layout_key="PA_BSND", sparse_count=8)
    assert isinstance(got, torch.Tensor) and got.view(-1, 1, 8).shape == (5, 1, 8)
    assert_matches_reference(got, {k: v.numpy() for k, v in t.items()}, "TND", "PA_BSND", 8)


# --- ms_custom_ops (MindSpore) ----------------------------------------------------------------
def _ms_custom_ops_documented_inputs(ms):
    """ms_custom_ops' README example, exactly: query (1, 1, 64, 128) uniform(-10, 10), key
    (64, 256, 1, 128) uniform(-5, 10), weights (1, 1, 64, 1) uniform(-1, 1), bfloat16; lengths
    [1] / [8192]; block_table range(64)."""
    rng = np.random.default_rng(1)
    np_in = dict(query=rng.uniform(-10.0, 10.0, size=(1, 1, 64, 128)),
                 key=rng.uniform(-5.0, 10.0, size=(64, 256, 1, 128)),
                 weights=rng.uniform(-1.0, 1.0, size=(1, 1, 64, 1)))
    t = {k: ms.Tensor(v, dtype=ms.bfloat16) for k, v in np_in.items()}
    t["actual_seq_lengths_query"] = ms.Tensor([1], dtype=ms.int32)
    t["actual_seq_lengths_key"] = ms.Tensor([8192], dtype=ms.int32)
    t["block_table"] = ms.Tensor([range(64)], dtype=ms.int32).reshape(1, -1)
    return t


def _as_numpy(t):
    import mindspore as ms

    return {k: (v.astype(ms.float32) if v.dtype == ms.bfloat16 else v).asnumpy() for k, v in t.items()}


@needs_ms
def test_ms_custom_ops_documented_example(ms_pynative):
    from ascend_ops.compat import ms_custom_ops

    t = _ms_custom_ops_documented_inputs(ms_pynative)
    out = ms_custom_ops.lightning_indexer(t["query"], t["key"], t["weights"], t["actual_seq_lengths_query"],
                                          t["actual_seq_lengths_key"], t["block_table"], 0, 0, 2048, 3)
    assert out.shape == (1, 1, 1, 2048) and out.dtype == ms_pynative.int32
    assert_matches_reference(out.asnumpy(), _as_numpy(t), "BSND", "PA_BSND", 2048)


@needs_ms
def test_ms_custom_ops_in_graph_mode(ms_pynative):
    """Their test's graph half: ``ms.jit`` over the call with layout_query=0, layout_key=0 by
    keyword; and a TND query (layout_query=1) with [T, N1, 1] weights."""
    from ascend_ops.compat import ms_custom_ops

    ms = ms_pynative
    t = _ms_custom_ops_documented_inputs(ms)

    def run(query, key, weights, q_lens, k_lens, block_table, layout_query, layout_key, sparse_count, sparse_mode):
        return ms_custom_ops.lightning_indexer(query, key, weights, q_lens, k_lens, block_table,
                                              layout_query=layout_query, layout_key=layout_key,
                                              sparse_count=sparse_count, sparse_mode=sparse_mode)

    args = (t["query"], t["key"], t["weights"], t["actual_seq_lengths_query"], t["actual_seq_lengths_key"],
            t["block_table"])
    eager = run(*args, 0, 0, 2048, 3)
    graph = ms.jit(run)(*args, layout_query=0, layout_key=0, sparse_count=2048, sparse_mode=3)
    np.testing.assert_array_equal(graph.asnumpy(), eager.asnumpy())
    tnd = dict(t, query=t["query"].reshape(1, 64, 128), weights=t["weights"].reshape(1, 64, 1))
    out = ms_custom_ops.lightning_indexer(tnd["query"], tnd["key"], tnd["weights"], tnd["actual_seq_lengths_query"],
                                          tnd["actual_seq_lengths_key"], tnd["block_table"], 1, 0, 2048, 3)
    np.testing.assert_array_equal(out.asnumpy().reshape(-1), eager.asnumpy().reshape(-1))


@needs_ms
@pytest.mark.parametrize("layouts", [(2, 0), (0, 1), (-1, 0)])
def test_ms_custom_ops_refuses_their_invalid_layouts(ms_pynative, layouts):
    """Their exception test: layout_query 2 and layout_key 1 are refused."""
    from ascend_ops.compat import ms_custom_ops

    t = _ms_custom_ops_documented_inputs(ms_pynative)
    with pytest.raises(ValueError, match=rf"^lightning_indexer: layout_query .* but are {layouts[0]} and "
                                         rf"{layouts[1]}$"):
        ms_custom_ops.lightning_indexer(t["query"], t["key"], t["weights"], t["actual_seq_lengths_query"],
                                        t["actual_seq_lengths_key"], t["block_table"], layout_query=layouts[0],
                                        layout_key=layouts[1])
