"""The drop-in call forms of ascend_ops.compat: each source project's documented example (or its
callers' call, as vllm-ascend's sparse attention), written by us from their documentation, run
through our module and checked against our NumPy references; plus what each translation refuses (vLLM's fp8 caches) and the clear ImportError of
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
@needs_ms
def test_ms_custom_ops_documented_example(ms_pynative):
    """ms_custom_ops' README example as they write it: key / value (128, 1, 2048) float16
    ([batch, seq, hidden]), caches (1024, 16, 32, 64), slot_mapping arange(128) int32, keyword
    call, cache_mode=0, head_num=32."""
    ms = ms_pynative
    from ascend_ops.compat import ms_custom_ops
    from ascend_ops.reshape_and_cache import reference

    rng = np.random.default_rng(0)
    key, value = (rng.random((128, 1, 2048)).astype(np.float16) for _ in range(2))
    key_cache, value_cache = (rng.random((1024, 16, 32, 64)).astype(np.float16) for _ in range(2))
    slot_mapping = np.arange(128, dtype=np.int32)
    want = reference.reshape_and_cache(key.reshape(128, 32, 64), value.reshape(128, 32, 64), key_cache, value_cache,
                                       slot_mapping)
    kc, vc = ms.Tensor(key_cache), ms.Tensor(value_cache)
    out = ms_custom_ops.reshape_and_cache(key=ms.Tensor(key), value=ms.Tensor(value), key_cache=kc,
                                          value_cache=vc, slot_mapping=ms.Tensor(slot_mapping), cache_mode=0,
                                          head_num=32)
    assert out is None  # as ms_custom_ops' PyNative call
    np.testing.assert_array_equal(kc.asnumpy(), want[0])
    np.testing.assert_array_equal(vc.asnumpy(), want[1])


# ms_custom_ops' documented forms: key / value [T, H*D] or [B, S, H*D] with head_num, ND or NZ
# caches, float16 / bfloat16 / int8 per pair (key with key_cache, value with value_cache). Our grid,
# from their README's table: (B, S) or T, heads, head size, blocks, block size.
MS_FORMS = [((3, 5), 4, 64, 8, 16), ((13,), 2, 128, 4, 16), ((2, 1), 8, 32, 3, 32), ((1, 7), 1, 96, 2, 16)]
MS_DTYPES = [("float16", "float16"), ("bfloat16", "bfloat16"), ("int8", "int8"), ("int8", "float16"),
             ("int8", "bfloat16"), ("float16", "int8")]


def _ms_array(rng, shape, dtype):
    if dtype == "int8":
        return rng.integers(-128, 128, size=shape, dtype=np.int8)
    x = rng.standard_normal(shape).astype(np.float32)
    return (x.view(np.uint32) >> 16).astype(np.uint16) if dtype == "bfloat16" else x.astype(np.float16)


def _ms_tensor(ms, array, dtype):
    if dtype == "bfloat16":
        return ms.Tensor((array.astype(np.uint32) << 16).view(np.float32), ms.bfloat16)
    return ms.Tensor(array)


def _ms_numpy(tensor, dtype):
    import mindspore as ms

    if dtype == "bfloat16":
        return (tensor.astype(ms.float32).asnumpy().view(np.uint32) >> 16).astype(np.uint16)
    return tensor.asnumpy()


@needs_ms
@pytest.mark.parametrize("cache_mode", [0, 1], ids=["nd", "nz"])
@pytest.mark.parametrize("kdt,vdt", MS_DTYPES, ids=[f"k{k}-v{v}" for k, v in MS_DTYPES])
@pytest.mark.parametrize("form", MS_FORMS, ids=lambda f: "x".join(map(str, f[0])) + f"-H{f[1]}-D{f[2]}")
def test_ms_custom_ops_forms_and_dtype_pairs(ms_pynative, form, kdt, vdt, cache_mode):
    ms = ms_pynative
    from ascend_ops.compat import ms_custom_ops
    from ascend_ops.reshape_and_cache import reference

    lead, heads, d, nb, bs = form
    tokens = int(np.prod(lead))
    rng = np.random.default_rng(tokens * heads + d)
    key, value = _ms_array(rng, lead + (heads * d,), kdt), _ms_array(rng, lead + (heads * d,), vdt)
    caches = []
    for dt in (kdt, vdt):
        f = 32 // np.dtype(np.int8 if dt == "int8" else np.float16).itemsize
        shape = (nb, heads * d // f, bs, f) if cache_mode == 1 else (nb, bs, heads, d)
        caches.append(_ms_array(rng, shape, dt))
    slots = rng.permutation(nb * bs)[:tokens].astype(np.int32)
    want = [reference.reshape_and_cache(src.reshape(tokens, heads, d), None, cache, None, slots,
                                        cache_mode=cache_mode)[0] for src, cache in zip((key, value), caches)]
    kc, vc = _ms_tensor(ms, caches[0], kdt), _ms_tensor(ms, caches[1], vdt)
    ms_custom_ops.reshape_and_cache(key=_ms_tensor(ms, key, kdt), value=_ms_tensor(ms, value, vdt), key_cache=kc,
                                    value_cache=vc, slot_mapping=ms.Tensor(slots), cache_mode=cache_mode,
                                    head_num=heads)
    np.testing.assert_array_equal(_ms_numpy(kc, kdt), want[0])
    np.testing.assert_array_equal(_ms_numpy(vc, vdt), want[1])


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


# vLLM's test_reshape_and_cache grid (heads 8, head sizes 64 / 80 / 256, block sizes 8 / 16 / 32,
# float16 / bfloat16 / float32, "auto" and "fp8"), in small: 42 tokens, few blocks.
VLLM_PAGED = [(hs, bs, dt) for hs in (64, 80, 256) for bs in (8, 16, 32) for dt in ("float16", "bfloat16", "float32")]


def _paged_caches(torch, num_blocks, heads, head_size, block_size, dtype, gen):
    x = 16 // torch.tensor([], dtype=dtype).element_size()  # vLLM's x: 16 bytes of the cache dtype
    if dtype == torch.uint8:
        key_cache = torch.randint(0, 256, (num_blocks, heads, head_size // x, block_size, x), generator=gen,
                                  dtype=dtype)
        value_cache = torch.randint(0, 256, (num_blocks, heads, head_size, block_size), generator=gen, dtype=dtype)
        return key_cache, value_cache
    key_cache = torch.randn(num_blocks, heads, head_size // x, block_size, x, generator=gen).to(dtype)
    value_cache = torch.randn(num_blocks, heads, head_size, block_size, generator=gen).to(dtype)
    return key_cache, value_cache


def _np(torch, t):
    return t.view(torch.int16).numpy() if t.dtype == torch.bfloat16 else t.numpy()


@needs_torch
@pytest.mark.parametrize("head_size,block_size,dtype", VLLM_PAGED, ids=[f"D{h}-bs{b}-{d}" for h, b, d in VLLM_PAGED])
def test_vllm_reshape_and_cache_paged_layout(head_size, block_size, dtype):
    """vLLM's reshape_and_cache: key [nb, H, D/x, bs, x], value [nb, H, D, bs], "auto"."""
    import torch

    from ascend_ops.compat import vllm
    from ascend_ops.reshape_and_cache import reference

    gen = torch.Generator().manual_seed(head_size + block_size)
    tokens, heads, num_blocks = 42, 8, 6
    tdtype = getattr(torch, dtype)
    slot_mapping = torch.randperm(num_blocks * block_size, generator=gen)[:tokens].to(torch.long)
    qkv = torch.randn(tokens, 3, heads, head_size, generator=gen).to(tdtype)
    _, key, value = qkv.unbind(dim=1)
    key_cache, value_cache = _paged_caches(torch, num_blocks, heads, head_size, block_size, tdtype, gen)
    want = reference.reshape_and_cache(_np(torch, key), _np(torch, value), _np(torch, key_cache),
                                       _np(torch, value_cache), slot_mapping.numpy(), cache_mode=3)
    assert vllm.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, "auto", torch.ones(1),
                                  torch.ones(1)) is None
    assert np.array_equal(_np(torch, key_cache), want[0]) and np.array_equal(_np(torch, value_cache), want[1])


@needs_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_vllm_reshape_and_cache_paged_fp8(dtype):
    """The fp8 half of vLLM's grid: uint8 caches with x = 16, codes of x / k_scale (E4M3FN)."""
    import torch

    from ascend_ops.compat import vllm
    from ascend_ops.reshape_and_cache import reference

    gen = torch.Generator().manual_seed(3)
    tokens, heads, head_size, block_size, num_blocks = 42, 8, 80, 16, 6
    tdtype = getattr(torch, dtype)
    slot_mapping = torch.randperm(num_blocks * block_size, generator=gen)[:tokens].to(torch.long)
    key = torch.randn(tokens, heads, head_size, generator=gen).to(tdtype)
    value = torch.randn(tokens, heads, head_size, generator=gen).to(tdtype)
    key_cache, value_cache = _paged_caches(torch, num_blocks, heads, head_size, block_size, torch.uint8, gen)
    k_scale, v_scale = torch.tensor([0.05]), torch.tensor([0.07])
    def bits(t):  # bfloat16 as its uint16 bit patterns, as the reference reads them
        return _np(torch, t).view(np.uint16) if t.dtype == torch.bfloat16 else _np(torch, t)

    want = reference.reshape_and_cache(bits(key), bits(value), key_cache.numpy(), value_cache.numpy(),
                                       slot_mapping.numpy(), cache_mode=3, kv_cache_dtype="fp8",
                                       k_scale=k_scale.numpy(), v_scale=v_scale.numpy())
    vllm.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, "fp8", k_scale, v_scale)
    assert np.array_equal(key_cache.numpy(), want[0]) and np.array_equal(value_cache.numpy(), want[1])


@needs_torch
def test_vllm_reshape_and_cache_flash_into_halves_of_one_allocation():
    """vLLM's flash backend allocation: one [num_blocks, 2, block_size, H, D] tensor, K and V its
    halves (strided views), and its HND stride order permuted back to [nb, bs, H, D]."""
    import torch

    from ascend_ops.compat import vllm
    from ascend_ops.reshape_and_cache import reference

    gen = torch.Generator().manual_seed(5)
    tokens, heads, head_size, block_size, num_blocks = 42, 8, 80, 16, 10
    slot_mapping = torch.randperm(num_blocks * block_size, generator=gen)[:tokens].to(torch.long)
    key = torch.randn(tokens, heads, head_size, generator=gen).half()
    value = torch.randn(tokens, heads, head_size, generator=gen).half()
    nhd = torch.randn(num_blocks, 2, block_size, heads, head_size, generator=gen).half()
    hnd = torch.randn(num_blocks, 2, heads, block_size, head_size, generator=gen).half().transpose(2, 3)
    for kv in (nhd, hnd):
        key_cache, value_cache = kv.unbind(1)
        want = reference.reshape_and_cache(key.numpy(), value.numpy(), key_cache.numpy(), value_cache.numpy(),
                                           slot_mapping.numpy())
        vllm.reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping, "auto", torch.ones(1),
                                     torch.ones(1))
        assert np.array_equal(key_cache.numpy(), want[0]) and np.array_equal(value_cache.numpy(), want[1])


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


_FP8 = {"fp8": ("float8_e4m3fn", 448.0), "fp8_e4m3": ("float8_e4m3fn", 448.0), "fp8_e5m2": ("float8_e5m2", 57344.0)}


def _vllm_fp8_codes(torch, x, scale, kv_cache_dtype):
    """vLLM's scaled_vec_conversion: fp8(float(x) / scale) in float32, round to nearest even,
    saturated to the format's largest finite value; here through torch's own float8 cast."""
    fmt, bound = _FP8[kv_cache_dtype]
    y = x.float() / scale.float().view(1, -1, 1)
    return y.clamp(-bound, bound).to(getattr(torch, fmt)).view(torch.uint8)


@needs_torch
@pytest.mark.parametrize("kv_cache_dtype", ["fp8", "fp8_e4m3", "fp8_e5m2"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("per_head", [False, True])
def test_vllm_reshape_and_cache_flash_fp8(kv_cache_dtype, dtype, per_head):
    """The fp8 modes as vLLM calls them (uint8 caches, float32 k_scale / v_scale [1] or
    [num_heads]): byte-equal to vLLM's formula, computed here with torch's float8 cast; values
    beyond the format's range saturate; padding slots leave the cache alone."""
    import torch

    from ascend_ops.compat import vllm

    gen = torch.Generator().manual_seed(1)
    tokens, heads, head_size, block_size, num_blocks = 37, 4, 64, 16, 8
    tdtype = getattr(torch, dtype)
    slot_mapping = torch.randperm(num_blocks * block_size, generator=gen)[:tokens]
    slot_mapping[[3, 20]] = -1
    key = (torch.randn(tokens, heads, head_size, generator=gen) * 30).to(tdtype)
    value = (torch.randn(tokens, heads, head_size, generator=gen) * 3).to(tdtype)
    key[0, 0, :4] = torch.tensor([1e4, -1e4, 0.0, -0.0]).to(tdtype)  # saturation and signed zeros
    n = heads if per_head else 1
    k_scale = torch.rand(n, generator=gen) * 0.5 + 0.05
    v_scale = torch.rand(n, generator=gen) * 0.02 + 1e-3
    key_cache = torch.full((num_blocks, block_size, heads, head_size), 0xA5, dtype=torch.uint8)
    value_cache = key_cache.clone()
    assert vllm.reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale,
                                        v_scale) is None
    live = slot_mapping >= 0
    flat_k, flat_v = key_cache.view(-1, heads, head_size), value_cache.view(-1, heads, head_size)
    assert torch.equal(flat_k[slot_mapping[live]], _vllm_fp8_codes(torch, key, k_scale, kv_cache_dtype)[live])
    assert torch.equal(flat_v[slot_mapping[live]], _vllm_fp8_codes(torch, value, v_scale, kv_cache_dtype)[live])
    untouched = torch.ones(num_blocks * block_size, dtype=torch.bool)
    untouched[slot_mapping[live]] = False
    assert (flat_k[untouched] == 0xA5).all() and (flat_v[untouched] == 0xA5).all()


@needs_torch
def test_vllm_reshape_and_cache_flash_fp8_into_a_float8_view():
    """A cache held as torch.float8_e4m3fn is written through a uint8 view of the same memory; a
    float8 format that is not the mode's is refused before anything is written."""
    import torch

    from ascend_ops.compat import vllm

    key = torch.randn(3, 2, 32) * 4
    cache = torch.zeros(2, 4, 2, 32, dtype=torch.float8_e4m3fn)
    slots = torch.tensor([5, -1, 0])
    vllm.reshape_and_cache_flash(key, None, cache, None, slots, "fp8", torch.tensor([0.5]), None)
    got = cache.view(torch.uint8).view(-1, 2, 32)
    want = _vllm_fp8_codes(torch, key, torch.tensor([0.5]), "fp8")
    assert torch.equal(got[[5, 0]], want[[0, 2]])
    e5 = torch.zeros(2, 4, 2, 32, dtype=torch.float8_e5m2)
    with pytest.raises(TypeError, match="key_cache should hold the format of kv_cache_dtype 'fp8'"):
        vllm.reshape_and_cache_flash(key, None, e5, None, slots, "fp8", torch.tensor([0.5]), None)
    assert not e5.view(torch.uint8).any()


@needs_torch
def test_vllm_unknown_kv_cache_dtype_is_refused():
    import torch

    from ascend_ops.compat import vllm

    cache = torch.zeros(2, 4, 1, 16)
    with pytest.raises(ValueError, match=r"kv_cache_dtype should be one of .*'fp8_e5m2'.* but is 'fp8_inc'"):
        vllm.reshape_and_cache_flash(torch.ones(1, 1, 16), torch.ones(1, 1, 16), cache, cache.clone(),
                                     torch.zeros(1, dtype=torch.long), "fp8_inc", torch.ones(1), torch.ones(1))
    assert not cache.any()


def _vllm_indexer_cache(torch, k, slot_mapping, num_blocks, block_size, qbs, ue8m0):
    """vLLM's indexer_k_quant_and_cache, from its definition: per group of qbs elements a float32
    scale max(amax, 1e-4) / 448 (ue8m0: the next power of two), E4M3FN codes of x / scale; a
    block holds its block_size code rows, then block_size * G float32 scales."""
    T, D = k.shape
    G = D // qbs
    x = k.float().view(T, G, qbs)
    sc = x.abs().amax(-1).clamp_min(1e-4) / 448
    if ue8m0:
        mant, exp = torch.frexp(sc)  # sc = mant * 2**exp, mant in [0.5, 1)
        sc = torch.ldexp(torch.ones_like(sc), torch.where(mant == 0.5, exp - 1, exp))
    q = (x / sc[..., None]).clamp(-448, 448).to(torch.float8_e4m3fn).view(torch.uint8).view(T, D)
    cache = torch.zeros(num_blocks, block_size * (D + 4 * G), dtype=torch.uint8)
    for t, s in enumerate(slot_mapping.tolist()):
        if s < 0:
            continue
        b, o = divmod(s, block_size)
        cache[b, o * D:(o + 1) * D] = q[t]
        at = block_size * D + 4 * o * G
        cache[b, at:at + 4 * G] = sc[t].contiguous().view(torch.uint8)
    return cache


@needs_torch
@pytest.mark.parametrize("scale_fmt", ["ue8m0", None, "fp8_e4m3"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_vllm_indexer_k_quant_and_cache(scale_fmt, dtype):
    """vLLM's call (k [T, 128], the fused uint8 cache [num_blocks, block_size, 128 + 4],
    quant_block_size 128, scale_fmt): byte-equal to vLLM's formula; only "ue8m0" rounds scales."""
    import torch

    from ascend_ops.compat import vllm

    gen = torch.Generator().manual_seed(2)
    tokens, D, qbs, block_size, num_blocks = 21, 128, 128, 8, 4
    k = (torch.randn(tokens, D, generator=gen) * torch.rand(tokens, 1, generator=gen) * 5).to(getattr(torch, dtype))
    k[4] = 0  # a zero row: the 1e-4 floor
    slot_mapping = torch.randperm(num_blocks * block_size, generator=gen)[:tokens]
    slot_mapping[9] = -1
    kv_cache = torch.zeros(num_blocks, block_size, D + 4 * (D // qbs), dtype=torch.uint8)
    assert vllm.indexer_k_quant_and_cache(k, kv_cache, slot_mapping, qbs, scale_fmt) is None
    want = _vllm_indexer_cache(torch, k, slot_mapping, num_blocks, block_size, qbs, scale_fmt == "ue8m0")
    assert torch.equal(kv_cache.view(num_blocks, -1), want)


@needs_torch
@pytest.mark.parametrize("granularity", ["tensor", "channel"])
def test_vllm_ascend_c8_write(granularity):
    """vllm-ascend's C8 store (bfloat16 K/V padded beyond the slots, the layer's flattened scale /
    offset parameters in bfloat16): codes are clamp(round(x / scale + offset)) in float32, and
    within one of vllm-ascend's own bfloat16 reciprocal path."""
    import torch

    from ascend_ops.compat import vllm_ascend

    gen = torch.Generator().manual_seed(3)
    padded, tokens, heads, head_size, block_size, num_blocks = 12, 9, 2, 32, 4, 6
    key = (torch.randn(padded, heads, head_size, generator=gen) * 2).to(torch.bfloat16)
    value = (torch.randn(padded, heads, head_size, generator=gen) * 2).to(torch.bfloat16)
    n = heads * head_size if granularity == "channel" else 1
    k_scale = (torch.rand(n, generator=gen) * 0.03 + 0.02).to(torch.bfloat16)
    v_scale = (torch.rand(n, generator=gen) * 0.03 + 0.02).to(torch.bfloat16)
    k_offset = torch.randint(-3, 4, (n,), generator=gen).to(torch.bfloat16)
    slot_mapping = torch.randperm(num_blocks * block_size, generator=gen)[:tokens].to(torch.int32)
    key_cache = torch.zeros(num_blocks, block_size, heads, head_size, dtype=torch.int8)
    value_cache = torch.zeros_like(key_cache)
    assert vllm_ascend.reshape_and_cache_c8(key, value, key_cache, value_cache, slot_mapping, k_scale, k_offset,
                                            v_scale, None) is None

    def ours(x, scale, offset):
        y = x[:tokens].float() / scale.float().view(-1, head_size if n > 1 else 1)
        if offset is not None:
            y = y + offset.float().view(-1, head_size if n > 1 else 1)
        return torch.clamp(torch.round(y), -128, 127).to(torch.int8)

    def theirs(x, scale, offset):  # vllm-ascend's torch path, in the parameters' dtype
        inv = (1.0 / scale).view(-1, head_size if n > 1 else 1)
        y = x[:tokens] * inv + (offset.view(-1, head_size if n > 1 else 1) if offset is not None else 0)
        return torch.clamp(torch.round(y), -128, 127).to(torch.int8)

    got_k = key_cache.view(-1, heads, head_size)[slot_mapping.long()]
    got_v = value_cache.view(-1, heads, head_size)[slot_mapping.long()]
    assert torch.equal(got_k, ours(key, k_scale, k_offset)) and torch.equal(got_v, ours(value, v_scale, None))
    assert (got_k.int() - theirs(key, k_scale, k_offset).int()).abs().max() <= 1


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
@pytest.mark.parametrize("module,name", [("vllm_ascend", "npu_lightning_indexer_legacy"),
                                         ("custom_pypto", "npu_lightning_indexer_pto")])
def test_lightning_indexer_keyword_forms(module, name):
    """The single-tensor forms (custom_pypto's; vllm-ascend's old one, kept as ``_legacy``):
    every argument by keyword, layout_query="TND", layout_key="PA_BSND", sparse_mode=3; returns
    the indices only (the current pair forms: test_compat_indexer.py)."""
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
    got = vllm_ascend.npu_lightning_indexer_legacy(**dict(inputs, actual_seq_lengths_key=original),
                                                   layout_query="TND", layout_key=layout_key, sparse_count=8,
                                                   sparse_mode=3, cmp_ratio=4)
    assert torch.equal(vllm_ascend.npu_lightning_indexer(**dict(inputs, actual_seq_lengths_key=original),
                                                         layout_query="TND", layout_key=layout_key, sparse_count=8,
                                                         sparse_mode=3, cmp_ratio=4)[0], got)
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
@pytest.mark.parametrize("layout_k", ["PA_BBND", "TND"])
def test_cann_ops_transformer_v2_form(layout_k):
    """CANN's ``lightning_indexer`` (v2) as VeOmni calls it for DeepSeek-V4: TND query with
    cu_seqlens (B + 1, from 0), fp32 weights, mask_mode 3, cmp_ratio 4 with cmp_residual_k
    (compressed key counts), return_value 1; the paged cache as PA_BBND with seqused_k, or a TND
    key with cu_seqlens_k. Same indices and values as our op and the reference."""
    import torch

    from ascend_ops.compat import cann_ops_transformer
    from ascend_ops.lightning_indexer import reference

    inputs = _indexer_inputs(torch)  # TND query ends [2, 5]; compressed key counts [20, 37]
    residual = torch.tensor([3, 1], dtype=torch.int32)
    w = inputs["weights"][..., 0].float()
    cu_q = torch.cat([torch.zeros(1, dtype=torch.int32), inputs["actual_seq_lengths_query"]])
    kwargs = dict(cu_seqlens_q=cu_q, cmp_residual_k=residual, layout_q="TND", layout_k=layout_k, mask_mode=3,
                  cmp_ratio=4, return_value=1, metadata=torch.zeros(1024, dtype=torch.int32))
    key, ends = inputs["key"], [20, 57]
    if layout_k == "TND":
        table, bs = inputs["block_table"], key.shape[1]
        key = torch.stack([key[table[b, j // bs], j % bs] for b, n in enumerate((20, 37)) for j in range(n)])
        kwargs["cu_seqlens_k"] = torch.tensor([0] + ends, dtype=torch.int32)
    else:
        kwargs.update(seqused_k=inputs["actual_seq_lengths_key"], block_table=inputs["block_table"])
    idx, val = cann_ops_transformer.lightning_indexer(inputs["query"], key, w, 8, **kwargs)
    lengths_k = torch.tensor(ends, dtype=torch.int32) if layout_k == "TND" else inputs["actual_seq_lengths_key"]
    want = reference.lightning_indexer(
        inputs["query"].numpy(), key.numpy(), w.numpy(), inputs["actual_seq_lengths_query"].numpy(),
        lengths_k.numpy(), kwargs.get("block_table", torch.zeros(0)).numpy() if layout_k != "TND" else None,
        layout_query="TND", layout_key="PA_BSND" if layout_k == "PA_BBND" else "TND", sparse_count=8, sparse_mode=3,
        cmp_ratio=4, cmp_residual_k=residual.numpy())
    np.testing.assert_array_equal(idx.numpy(), want[0])
    np.testing.assert_allclose(val.numpy(), want[1], rtol=1e-5, atol=1e-5)
    assert cann_ops_transformer.lightning_indexer(inputs["query"], key, w, 8, **dict(kwargs, return_value=0))[1] is None


@needs_torch
@pytest.mark.parametrize("change,words", [(dict(output_idx_offset=0), "output_idx_offset"),
                                          (dict(max_seqlen_q=4), "max_seqlen_q"),
                                          (dict(layout_k="PA_BSND"), "layout_k should be")])
def test_cann_ops_transformer_refuses_what_a2_a3_do_not_support(change, words):
    import torch

    from ascend_ops.compat import cann_ops_transformer

    inputs = _indexer_inputs(torch)
    kwargs = dict(block_table=inputs["block_table"], layout_q="TND", layout_k="PA_BBND")
    with pytest.raises(ValueError, match=words):
        cann_ops_transformer.lightning_indexer(inputs["query"], inputs["key"], inputs["weights"][..., 0], 8,
                                               **dict(kwargs, **change))
    with pytest.raises(ValueError, match="seqused_q"):
        cann_ops_transformer.lightning_indexer(inputs["query"], inputs["key"], inputs["weights"][..., 0], 8,
                                               seqused_q=torch.ones(2, dtype=torch.int32))


@needs_torch
def test_lightning_indexer_keyword_only_after_weights():
    import torch

    from ascend_ops.compat import custom_pypto

    inputs = _indexer_inputs(torch)
    with pytest.raises(TypeError):
        custom_pypto.npu_lightning_indexer_pto(inputs["query"], inputs["key"], inputs["weights"],
                                               inputs["actual_seq_lengths_query"])


# --- sparse_flash_attention: vllm-ascend, torch_npu, MindSpore, ms_custom_ops -------------------
SFA_N1, SFA_D, SFA_DR, SFA_BLOCK, SFA_BLOCKS, SFA_K = 4, 32, 8, 8, 9, 6


def _sfa_inputs(seed=0):
    """vllm-ascend's decode / chunked-prefill call (``execute_sparse_flash_attention_process``):
    TND query (cumulative row ends), the PA_BSND latent cache as key and value, the rope cache,
    one index row per query token (logical positions, -1 tail). float32 on CPU; small widths
    (the NPU's D = 512, Dr = 64, N1 = 2^k are NPU limits)."""
    rng = np.random.default_rng(seed)
    cu_q = np.array([2, 5], np.int32)                    # two batches: 2 and 3 query tokens
    len_kv = np.array([19, 30], np.int32)
    block_table = np.array([[7, 2, 0, -1], [5, 1, 8, 3]], np.int32)
    t = int(cu_q[-1])
    indices = np.full((t, 1, SFA_K), -1, np.int32)
    for row in range(t):
        b = 0 if row < cu_q[0] else 1
        r = row - (0 if b == 0 else int(cu_q[0]))
        act_q = int(cu_q[0]) if b == 0 else int(cu_q[1] - cu_q[0])
        visible = int(len_kv[b]) - act_q + r + 1
        n = min(SFA_K - (row % 2), visible)           # some rows end in -1
        indices[row, 0, :n] = rng.choice(visible, n, replace=False)
    return dict(query=rng.standard_normal((t, SFA_N1, SFA_D)).astype(np.float32),
                kv=rng.standard_normal((SFA_BLOCKS, SFA_BLOCK, 1, SFA_D)).astype(np.float32),
                key_rope=rng.standard_normal((SFA_BLOCKS, SFA_BLOCK, 1, SFA_DR)).astype(np.float32),
                q_pe=rng.standard_normal((t, SFA_N1, SFA_DR)).astype(np.float32),
                indices=indices, cu_q=cu_q, len_kv=len_kv, block_table=block_table,
                scale=float(SFA_D + SFA_DR) ** -0.5)


def _sfa_reference(a, sparse_mode=3):
    from ascend_ops.sparse_flash_attention import reference

    return reference.sparse_flash_attention(
        a["query"], a["kv"], a["kv"], a["indices"], a["scale"], block_table=a["block_table"],
        actual_seq_lengths_query=a["cu_q"], actual_seq_lengths_kv=a["len_kv"], query_rope=a["q_pe"],
        key_rope=a["key_rope"], layout_query="TND", layout_kv="PA_BSND", sparse_mode=sparse_mode)


@needs_torch
@pytest.mark.parametrize("return_lse,sparse_mode", [(False, 3), (True, 0)], ids=["decode", "dcp-lse"])
def test_vllm_ascend_sparse_flash_attention_as_device_op_calls_it(return_lse, sparse_mode):
    """vllm-ascend's ``execute_sparse_flash_attention_process``: every argument by keyword, value = key
    (the latent cache), sparse_block_size 1, TND / PA_BSND, attention_mode 2; under decode context
    parallel sparse_mode 0 and the lse pair, merged as ``softmax_max + log(softmax_sum)``."""
    import torch

    from ascend_ops.compat import vllm_ascend

    a = _sfa_inputs()
    t = {k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in a.items()}
    kv_cache = (t["kv"], t["key_rope"])
    result = vllm_ascend.npu_sparse_flash_attention(
        query=t["query"], key=kv_cache[0], value=kv_cache[0], sparse_indices=t["indices"], scale_value=a["scale"],
        sparse_block_size=1, block_table=t["block_table"], actual_seq_lengths_query=t["cu_q"],
        actual_seq_lengths_kv=t["len_kv"], query_rope=t["q_pe"], key_rope=kv_cache[1], layout_query="TND",
        layout_kv="PA_BSND", sparse_mode=sparse_mode, attention_mode=2, return_softmax_lse=return_lse)
    assert isinstance(result, tuple) and len(result) == 3
    out, softmax_max, softmax_sum = result
    want_out, want_m, want_l = _sfa_reference(a, sparse_mode)
    assert out.shape == t["query"].shape and out.dtype == torch.float32
    np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-5, atol=1e-5)
    assert softmax_max.dtype == softmax_sum.dtype == torch.float32
    if return_lse:
        assert softmax_max.shape == softmax_sum.shape == (1, 5, SFA_N1)  # [N2, T1, N1 / N2]
        lse = softmax_max + torch.log(softmax_sum)  # sfa_cp.py's merge weight
        np.testing.assert_allclose(lse.numpy(), want_m + np.log(want_l), rtol=1e-5, atol=1e-5)
    else:
        assert softmax_max.shape == softmax_sum.shape == (0,)  # vllm-ascend: at::empty({0})


@needs_torch
def test_vllm_ascend_sparse_flash_attention_compiles_without_graph_breaks():
    import torch

    from ascend_ops.compat import vllm_ascend

    a = _sfa_inputs(1)
    t = {k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in a.items()}

    def attend(q, kv, kr, q_pe, idx, cu_q, len_kv, table):
        out, m, l = vllm_ascend.npu_sparse_flash_attention(
            query=q, key=kv, value=kv, sparse_indices=idx, scale_value=a["scale"], block_table=table,
            actual_seq_lengths_query=cu_q, actual_seq_lengths_kv=len_kv, query_rope=q_pe, key_rope=kr,
            layout_query="TND", layout_kv="PA_BSND")
        return out * 1, m.shape[0]

    out, lse_len = torch.compile(attend, fullgraph=True)(t["query"], t["kv"], t["key_rope"], t["q_pe"], t["indices"],
                                                          t["cu_q"], t["len_kv"], t["block_table"])
    assert lse_len == 0
    np.testing.assert_allclose(out.numpy(), _sfa_reference(a)[0], rtol=1e-5, atol=1e-5)


@needs_torch
def test_torch_npu_documented_example_in_small():
    """torch_npu's single-op example: BSND query and BSND key (its default layout_kv), value =
    key.clone(), attention_mode=2 given explicitly, positional scale_value, the lse pair asked."""
    import torch

    from ascend_ops.compat import torch_npu
    from ascend_ops.sparse_flash_attention import reference

    rng = np.random.default_rng(4)
    b, s1, s2, s2_act = 2, 1, 24, 16
    query = torch.from_numpy(rng.uniform(-1, 1, (b, s1, SFA_N1, SFA_D)).astype(np.float32))
    key = torch.from_numpy(rng.uniform(-1, 1, (b, s2, 1, SFA_D)).astype(np.float32))
    value = key.clone()
    idx = torch.from_numpy(np.stack([rng.choice(s2_act, SFA_K, replace=False)] * b).reshape(b, s1, 1, SFA_K)
                           .astype(np.int32))
    query_rope = torch.from_numpy(rng.uniform(-1, 1, (b, s1, SFA_N1, SFA_DR)).astype(np.float32))
    key_rope = torch.from_numpy(rng.uniform(-1, 1, (b, s2, 1, SFA_DR)).astype(np.float32))
    act_q = torch.tensor([s1] * b, dtype=torch.int32)
    act_kv = torch.tensor([s2_act] * b, dtype=torch.int32)
    out, m, l = torch_npu.npu_sparse_flash_attention(
        query, key, value, idx, 0.041666666666666664, block_table=None, actual_seq_lengths_query=act_q,
        actual_seq_lengths_kv=act_kv, query_rope=query_rope, key_rope=key_rope, sparse_block_size=1,
        layout_query="BSND", layout_kv="BSND", sparse_mode=3, pre_tokens=(1 << 63) - 1, next_tokens=(1 << 63) - 1,
        attention_mode=2, return_softmax_lse=True)
    want = reference.sparse_flash_attention(
        query.numpy(), key.numpy(), value.numpy(), idx.numpy(), 0.041666666666666664,
        actual_seq_lengths_query=act_q.numpy(), actual_seq_lengths_kv=act_kv.numpy(), query_rope=query_rope.numpy(),
        key_rope=key_rope.numpy(), layout_query="BSND", layout_kv="BSND", sparse_mode=3)
    assert m.shape == (b, 1, s1, SFA_N1)  # [B, N2, S1, N1 / N2]
    for got, ref in zip((out, m, l), want):
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-5, atol=1e-5)


@needs_torch
def test_torch_npu_defaults_are_torch_npus():
    """torch_npu's defaults: attention_mode 0 (refused, as torch_npu's tiling refuses it; the op's
    own message) and layout_kv "BSND" (a TND query then needs a TND key); sinks are refused."""
    import torch

    from ascend_ops.compat import torch_npu, vllm_ascend

    a = _sfa_inputs(2)
    t = {k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in a.items()}
    kw = dict(block_table=t["block_table"], actual_seq_lengths_query=t["cu_q"], actual_seq_lengths_kv=t["len_kv"],
              query_rope=t["q_pe"], key_rope=t["key_rope"], layout_query="TND", layout_kv="PA_BSND")
    args = (t["query"], t["kv"], t["kv"], t["indices"], a["scale"])
    with pytest.raises(ValueError, match=r"^sparse_flash_attention: .*attention_mode"):
        torch_npu.npu_sparse_flash_attention(*args, **kw)
    out, m, l = torch_npu.npu_sparse_flash_attention(*args, **kw, attention_mode=2)
    np.testing.assert_allclose(out.numpy(), _sfa_reference(a)[0], rtol=1e-5, atol=1e-5)
    assert m.shape == l.shape == (0,) and m.dtype == torch.float32
    # vllm-ascend's schema defaults attention_mode to 2: the same call without it works there
    np.testing.assert_array_equal(vllm_ascend.npu_sparse_flash_attention(*args, **kw)[0].numpy(), out.numpy())
    kw.pop("layout_kv")
    with pytest.raises(ValueError, match=r"^sparse_flash_attention: .*layout"):
        torch_npu.npu_sparse_flash_attention(*args, **kw, attention_mode=2)  # layout_kv "BSND" with TND query
    with pytest.raises(ValueError, match="sinks should be None"):
        torch_npu.npu_sparse_flash_attention(*args, **kw, layout_kv="PA_BSND", attention_mode=2,
                                             sinks=torch.zeros(SFA_N1))
    with pytest.raises(TypeError):
        torch_npu.npu_sparse_flash_attention(*args, t["block_table"])  # keyword-only after scale_value


def _ms_sfa_inputs(ms):
    a = _sfa_inputs(3)
    return a, {k: ms.Tensor(v) if isinstance(v, np.ndarray) else v for k, v in a.items()}


@needs_ms
@pytest.mark.parametrize("return_lse", [False, True])
def test_mindspore_ops_sparse_flash_attention(ms_pynative, return_lse):
    """``mindspore.ops.sparse_flash_attention``'s keyword form (attention_mode=2 given, as its
    documentation requires); its default attention_mode 0 is refused by the op."""
    ms = ms_pynative
    from ascend_ops.compat import mindspore_ops

    a, t = _ms_sfa_inputs(ms)
    kw = dict(block_table=t["block_table"], actual_seq_lengths_query=t["cu_q"], actual_seq_lengths_kv=t["len_kv"],
              query_rope=t["q_pe"], key_rope=t["key_rope"], layout_query="TND", layout_kv="PA_BSND")
    out, m, l = mindspore_ops.sparse_flash_attention(t["query"], t["kv"], t["kv"], t["indices"], a["scale"], **kw,
                                                     attention_mode=2, return_softmax_lse=return_lse)
    want = _sfa_reference(a)
    np.testing.assert_allclose(out.asnumpy(), want[0], rtol=1e-5, atol=1e-5)
    assert m.dtype == l.dtype == ms.float32
    if return_lse:
        np.testing.assert_allclose(m.asnumpy(), want[1], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(l.asnumpy(), want[2], rtol=1e-5, atol=1e-5)
    else:
        assert m.shape == l.shape == (0,)  # MindSpore's shape inference without the lse
    with pytest.raises(ValueError, match=r"^sparse_flash_attention: .*attention_mode"):
        mindspore_ops.sparse_flash_attention(t["query"], t["kv"], t["kv"], t["indices"], a["scale"], **kw)


@needs_ms
def test_mindspore_ops_sparse_flash_attention_in_graph_mode(ms_pynative):
    ms = ms_pynative
    from ascend_ops.compat import mindspore_ops

    a, t = _ms_sfa_inputs(ms)
    scale = a["scale"]

    @ms.jit
    def attend(q, kv, idx, table, cu_q, len_kv, q_pe, kr):
        out, m, _ = mindspore_ops.sparse_flash_attention(
            q, kv, kv, idx, scale, block_table=table, actual_seq_lengths_query=cu_q, actual_seq_lengths_kv=len_kv,
            query_rope=q_pe, key_rope=kr, layout_query="TND", layout_kv="PA_BSND", attention_mode=2)
        return out * 1, m

    out, m = attend(t["query"], t["kv"], t["indices"], t["block_table"], t["cu_q"], t["len_kv"], t["q_pe"],
                    t["key_rope"])
    np.testing.assert_allclose(out.asnumpy(), _sfa_reference(a)[0], rtol=1e-5, atol=1e-5)
    assert m.shape == (0,)


@needs_ms
def test_ms_custom_ops_sparse_flash_attention_positional(ms_pynative):
    """ms_custom_ops' own test calls every argument positionally: ... query_rope, key_rope,
    scale_value, sparse_block_size, layout_query (0 = BSND, 1 = TND), layout_kv (0 = BSND,
    1 = PA_BSND), sparse_mode; it returns the attention output only."""
    ms = ms_pynative
    from ascend_ops.compat import ms_custom_ops

    a, t = _ms_sfa_inputs(ms)
    out = ms_custom_ops.sparse_flash_attention(t["query"], t["kv"], t["kv"], t["indices"], t["block_table"], t["cu_q"],
                                               t["len_kv"], t["q_pe"], t["key_rope"], a["scale"], 1, 1, 1, 3)
    np.testing.assert_allclose(out.asnumpy(), _sfa_reference(a)[0], rtol=1e-5, atol=1e-5)
    out_kw = ms_custom_ops.sparse_flash_attention(
        t["query"], t["kv"], t["kv"], t["indices"], block_table=t["block_table"], actual_seq_lengths_query=t["cu_q"],
        actual_seq_lenghts_kv=t["len_kv"], query_rope=t["q_pe"], key_rope=t["key_rope"], scale_value=a["scale"],
        layout_query=1, layout_kv=1)
    np.testing.assert_array_equal(out_kw.asnumpy(), out.asnumpy())
    with pytest.raises(ValueError, match="layout_kv 0 .BSND. or 1 .PA_BSND."):
        ms_custom_ops.sparse_flash_attention(t["query"], t["kv"], t["kv"], t["indices"], layout_query=1, layout_kv=2)


# --- ops install independently ----------------------------------------------------------------
def test_missing_op_names_the_package(monkeypatch):
    """A compat module whose op is not installed says which package to install (on import)."""
    monkeypatch.setitem(sys.modules, "ascend_ops.reshape_and_cache", None)  # import -> ModuleNotFoundError
    monkeypatch.delitem(sys.modules, "ascend_ops.compat.vllm", raising=False)
    with pytest.raises(ImportError, match="install the ascend-op-reshape-and-cache package"):
        importlib.import_module("ascend_ops.compat.vllm")


def test_missing_sparse_flash_attention_names_its_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "ascend_ops.sparse_flash_attention", None)
    monkeypatch.delitem(sys.modules, "ascend_ops.compat.torch_npu", raising=False)
    with pytest.raises(ImportError, match="install the ascend-op-sparse-flash-attention package"):
        importlib.import_module("ascend_ops.compat.torch_npu")


def test_missing_indexer_k_quant_and_cache_names_its_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "ascend_ops.indexer_k_quant_and_cache", None)
    monkeypatch.delitem(sys.modules, "ascend_ops.compat.vllm", raising=False)
    with pytest.raises(ImportError, match="install the ascend-op-indexer-k-quant-and-cache package"):
        importlib.import_module("ascend_ops.compat.vllm")
