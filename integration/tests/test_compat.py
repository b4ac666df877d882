"""The drop-in call forms of ascend_ops.compat: each source project's documented example,
written by us from their documentation, run through our module and checked against our NumPy
references; plus what each translation refuses (vLLM's fp8 caches) and the clear ImportError of
a module whose op is not installed.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys

import numpy as np
import pytest

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")

HAS_TORCH = importlib.util.find_spec("torch") is not None
HAS_MS = importlib.util.find_spec("mindspore") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
needs_ms = pytest.mark.skipif(not HAS_MS, reason="mindspore is not installed")


# --- ms_custom_ops (MindSpore) -----------------------------------------------------------------
@pytest.fixture
def ms_pynative(tmp_path, monkeypatch):
    ms = pytest.importorskip("mindspore")
    monkeypatch.chdir(tmp_path)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield ms
    ms.set_context(mode=ms.PYNATIVE_MODE)


@needs_ms
def test_ms_custom_ops_documented_example(ms_pynative):
    """ms_custom_ops' README example: 128 tokens, 32 heads of 64, keyword call, cache_mode=0,
    head_num=32 (fewer blocks than the README's 1024: the slots used are 0..127)."""
    ms = ms_pynative
    from ascend_ops.compat import ms_custom_ops
    from ascend_ops.reshape_and_cache import reference

    rng = np.random.default_rng(0)
    key, value = (rng.random((128, 32, 64)).astype(np.float16) for _ in range(2))
    key_cache, value_cache = (rng.random((16, 16, 32, 64)).astype(np.float16) for _ in range(2))
    slot_mapping = np.arange(128, dtype=np.int32)
    want = reference.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping)
    kc, vc = ms.Tensor(key_cache), ms.Tensor(value_cache)
    out = ms_custom_ops.reshape_and_cache(key=ms.Tensor(key), value=ms.Tensor(value), key_cache=kc,
                                          value_cache=vc, slot_mapping=ms.Tensor(slot_mapping), cache_mode=0,
                                          head_num=32)
    assert out is None  # as ms_custom_ops' PyNative call
    np.testing.assert_array_equal(kc.asnumpy(), want[0])
    np.testing.assert_array_equal(vc.asnumpy(), want[1])


@needs_ms
@pytest.mark.parametrize("cache_mode", [0, 1], ids=["nd", "nz"])
def test_ms_custom_ops_key_only_two_dim_key(ms_pynative, cache_mode):
    """ms_custom_ops' key-only form ``reshape_and_cache(key, key_cache=..., slot_mapping=...,
    cache_mode=...)`` with a [T, H*D] key: ND takes H from the cache, NZ needs head_num."""
    ms = ms_pynative
    from ascend_ops.compat import ms_custom_ops
    from ascend_ops.reshape_and_cache import reference

    rng = np.random.default_rng(1)
    key = rng.random((39, 16, 32)).astype(np.float16)
    key_cache = rng.random((20, 64, 16, 32)).astype(np.float16)
    slots = rng.choice(20 * 64, 39, replace=False).astype(np.int32)
    if cache_mode:
        key_cache = reference.nd_to_nz(key_cache)
    want, _ = reference.reshape_and_cache(key, None, key_cache, None, slots, cache_mode=cache_mode)
    kc = ms.Parameter(ms.Tensor(key_cache), name="key_cache")
    kwargs = dict(head_num=16) if cache_mode else {}
    ms_custom_ops.reshape_and_cache(ms.Tensor(key.reshape(39, -1)), key_cache=kc, slot_mapping=ms.Tensor(slots),
                                    cache_mode=cache_mode, **kwargs)
    np.testing.assert_array_equal(kc.asnumpy(), want)


@needs_ms
def test_ms_custom_ops_in_graph_mode(ms_pynative):
    """ms_custom_ops' own tests wrap the call in a Cell compiled with jit: the same here (key-only,
    a Parameter cache, cache_mode and head_num as ints)."""
    ms = ms_pynative
    from ascend_ops.compat import ms_custom_ops
    from ascend_ops.reshape_and_cache import reference

    class Net(ms.nn.Cell):
        @ms.jit
        def construct(self, key, key_cache, slot_map, cache_mode):
            return ms_custom_ops.reshape_and_cache(key, key_cache=key_cache, slot_mapping=slot_map,
                                                   cache_mode=cache_mode)

    rng = np.random.default_rng(5)
    key = rng.random((13, 4, 32)).astype(np.float16)
    key_cache = rng.random((3, 8, 4, 32)).astype(np.float16)
    slots = rng.choice(24, 13, replace=False).astype(np.int32)
    want, _ = reference.reshape_and_cache(key, None, key_cache, None, slots)
    kc = ms.Parameter(ms.Tensor(key_cache), name="key_cache")
    Net()(ms.Tensor(key), kc, ms.Tensor(slots), 0)
    np.testing.assert_array_equal(kc.asnumpy(), want)


# --- vLLM-MindSpore -----------------------------------------------------------------------------
@needs_ms
def test_vllm_mindspore_advance_step_flashattn_keywords(ms_pynative):
    """vllm_mindspore._custom_ops.advance_step_flashattn, called with its keywords on int32
    MindSpore tensors (as vLLM-MindSpore's own test does): 4 sequences, 3 real queries."""
    ms = ms_pynative
    from ascend_ops.adv_step_flash import reference
    from ascend_ops.compat import vllm_mindspore

    num_seqs, num_queries, block_size = 4, 3, 16
    arrays = dict(input_tokens=np.zeros(num_seqs, np.int32),
                  sampled_token_ids=np.array([[11], [22], [33]], np.int32),
                  input_positions=np.zeros(num_seqs, np.int32),
                  seq_lens=np.array([5, 16, 31, 7], np.int32),
                  slot_mapping=np.zeros(num_seqs, np.int32),
                  block_tables=np.arange(num_seqs * 4, dtype=np.int32).reshape(num_seqs, 4))
    want = reference.advance_step_flashattn(num_seqs, num_queries, block_size, *arrays.values())
    t = {k: ms.Tensor(v) for k, v in arrays.items()}
    assert vllm_mindspore.advance_step_flashattn(num_seqs=num_seqs, num_queries=num_queries, block_size=block_size,
                                                 **t) is None
    for name in ("input_tokens", "input_positions", "seq_lens", "slot_mapping"):
        np.testing.assert_array_equal(t[name].asnumpy(), want[name], err_msg=name)


# --- vLLM (PyTorch) -----------------------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_vllm_reshape_and_cache_flash(dtype):
    """vLLM's test_reshape_and_cache_flash in small: random slots (one padding), the flash layout
    [num_blocks, block_size, H, D], kv_cache_dtype "auto" with unit k_scale / v_scale."""
    import torch

    from ascend_ops.compat import vllm
    from ascend_ops.reshape_and_cache import reference

    gen = torch.Generator().manual_seed(0)
    tokens, heads, head_size, block_size, num_blocks = 42, 4, 80, 16, 10
    tdtype = getattr(torch, dtype)
    slot_mapping = torch.randperm(num_blocks * block_size, generator=gen)[:tokens].to(torch.long)
    slot_mapping[7] = -1
    qkv = torch.randn(tokens, 3, heads, head_size, generator=gen).to(tdtype)
    _, key, value = qkv.unbind(dim=1)
    key_cache = torch.randn(num_blocks, block_size, heads, head_size, generator=gen).to(tdtype)
    value_cache = torch.randn(num_blocks, block_size, heads, head_size, generator=gen).to(tdtype)
    k_scale = v_scale = torch.ones(1)

    def np_(t):
        return t.view(torch.int16).numpy() if t.dtype == torch.bfloat16 else t.numpy()

    want = reference.reshape_and_cache(np_(key), np_(value), np_(key_cache), np_(value_cache), slot_mapping.numpy())
    assert vllm.reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping, "auto", k_scale,
                                        v_scale) is None
    assert np.array_equal(np_(key_cache), want[0]) and np.array_equal(np_(value_cache), want[1])


@needs_torch
def test_vllm_reshape_and_cache_flash_compiles_without_graph_breaks():
    import torch

    from ascend_ops.compat import vllm

    key, value = torch.randn(5, 2, 16), torch.randn(5, 2, 16)
    caches = [torch.zeros(3, 4, 2, 16), torch.zeros(3, 4, 2, 16)]
    slots = torch.tensor([3, -1, 0, 11, 7])
    fn = torch.compile(vllm.reshape_and_cache_flash, fullgraph=True)
    fn(key, value, *caches, slots, "auto", torch.ones(1), torch.ones(1))
    for cache, src in zip(caches, (key, value)):
        flat = cache.view(-1, 2, 16)
        assert torch.equal(flat[[3, 0, 11, 7]], src[[0, 2, 3, 4]]) and not flat[[1, 2]].any()


@needs_torch
@pytest.mark.parametrize("kv_cache_dtype", ["fp8", "fp8_e4m3", "fp8_e5m2"])
def test_vllm_fp8_cache_is_refused(kv_cache_dtype):
    import torch

    from ascend_ops.compat import vllm

    cache = torch.zeros(2, 4, 1, 16)
    with pytest.raises(ValueError, match=r"kv_cache_dtype should be one of \('auto',\).*" + kv_cache_dtype):
        vllm.reshape_and_cache_flash(torch.ones(1, 1, 16), torch.ones(1, 1, 16), cache, cache.clone(),
                                     torch.zeros(1, dtype=torch.long), kv_cache_dtype, torch.ones(1), torch.ones(1))
    assert not cache.any()


# --- custom_pypto and vllm-ascend / torch_npu (PyTorch) ---------------------------------------------
def _indexer_inputs(torch):
    """vllm-ascend's decode call: TND query (cumulative ends), PA_BSND key cache with a block
    table, weights [T, N1, 1]. Small sizes (the NPU's N1 = 64, D = 128 are NPU limits)."""
    gen = torch.Generator().manual_seed(3)
    n1, d, block_size, blocks = 4, 16, 16, 6
    cu_q = torch.tensor([2, 5], dtype=torch.int32)  # two batches: 2 and 3 query tokens
    len_k = torch.tensor([20, 37], dtype=torch.int32)
    query = torch.randn(5, n1, d, generator=gen)
    key = torch.randn(blocks, block_size, 1, d, generator=gen)
    weights = torch.rand(5, n1, 1, generator=gen)
    block_table = torch.tensor([[4, 1, 0], [2, 5, 3]], dtype=torch.int32)
    return dict(query=query, key=key, weights=weights, actual_seq_lengths_query=cu_q,
                actual_seq_lengths_key=len_k, block_table=block_table)


def _indexer_reference(inputs, sparse_count):
    from ascend_ops.lightning_indexer import reference

    a = {k: v.numpy() for k, v in inputs.items()}
    a["weights"] = a["weights"][..., 0]
    return reference.lightning_indexer(**a, layout_query="TND", layout_key="PA_BSND", sparse_count=sparse_count,
                                       sparse_mode=3)[0]


@needs_torch
@pytest.mark.parametrize("module,name", [("vllm_ascend", "npu_lightning_indexer"),
                                         ("custom_pypto", "npu_lightning_indexer_pto")])
def test_lightning_indexer_keyword_forms(module, name):
    """The vllm-ascend SFA call: every argument by keyword, layout_query="TND",
    layout_key="PA_BSND", sparse_mode=3; returns the indices only."""
    import torch

    fn = getattr(importlib.import_module(f"ascend_ops.compat.{module}"), name)
    inputs = _indexer_inputs(torch)
    got = fn(**inputs, layout_query="TND", layout_key="PA_BSND", sparse_count=8, sparse_mode=3)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.int32
    np.testing.assert_array_equal(got.numpy(), _indexer_reference(inputs, 8))


@needs_torch
@pytest.mark.parametrize("layout_key", ["PA_BSND", "TND"])
def test_vllm_ascend_cmp_ratio_takes_uncompressed_key_lengths(layout_key):
    """DeepSeek-V4, vllm-ascend's convention: actual_seq_lengths_key count the original tokens,
    the entry divides by cmp_ratio (residual = length mod cmp_ratio); the op's own convention
    (compressed rows + cmp_residual_k) gives the same indices."""
    import torch

    from ascend_ops.compat import vllm_ascend
    from ascend_ops.lightning_indexer import lightning_indexer, reference

    inputs = _indexer_inputs(torch)  # compressed lengths [20, 37]; original lengths below
    original = torch.tensor([20 * 4 + 3, 37 * 4 + 1], dtype=torch.int32)
    residual = torch.tensor([3, 1], dtype=torch.int32)
    if layout_key == "TND":  # the same compressed rows as a flat [T2, 1, D] key
        table, bs = inputs.pop("block_table"), inputs["key"].shape[1]
        rows = [inputs["key"][table[b, j // bs], j % bs] for b, n in enumerate((20, 37)) for j in range(n)]
        inputs["key"] = torch.stack(rows)
        inputs["actual_seq_lengths_key"] = torch.tensor([20, 57], dtype=torch.int32)
        original = torch.cumsum(original, 0).to(torch.int32)
    got = vllm_ascend.npu_lightning_indexer(**dict(inputs, actual_seq_lengths_key=original), layout_query="TND",
                                            layout_key=layout_key, sparse_count=8, sparse_mode=3, cmp_ratio=4)
    want, _ = lightning_indexer(**dict(inputs, weights=inputs["weights"][..., 0]), cmp_residual_k=residual,
                                layout_query="TND", layout_key=layout_key, sparse_count=8, sparse_mode=3,
                                cmp_ratio=4)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    a = {k: v.numpy() for k, v in inputs.items()}
    a["weights"] = a["weights"][..., 0]
    ref = reference.lightning_indexer(**a, layout_query="TND", layout_key=layout_key, sparse_count=8,
                                      sparse_mode=3, cmp_ratio=4, cmp_residual_k=residual.numpy())[0]
    np.testing.assert_array_equal(got.numpy(), ref)


@needs_torch
def test_lightning_indexer_keyword_only_after_weights():
    import torch

    from ascend_ops.compat import custom_pypto

    inputs = _indexer_inputs(torch)
    with pytest.raises(TypeError):
        custom_pypto.npu_lightning_indexer_pto(inputs["query"], inputs["key"], inputs["weights"],
                                               inputs["actual_seq_lengths_query"])


# --- ops install independently ----------------------------------------------------------------
def test_missing_op_names_the_package(monkeypatch):
    """A compat module whose op is not installed says which package to install (on import)."""
    monkeypatch.setitem(sys.modules, "ascend_ops.reshape_and_cache", None)  # import -> ModuleNotFoundError
    monkeypatch.delitem(sys.modules, "ascend_ops.compat.vllm", raising=False)
    with pytest.raises(ImportError, match="install the ascend-op-reshape-and-cache package"):
        importlib.import_module("ascend_ops.compat.vllm")
