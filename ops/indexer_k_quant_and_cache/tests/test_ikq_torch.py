"""The PyTorch adapter: torch.ops.ascend_ops.indexer_k_quant_and_cache.

The schema (alias annotations on both caches), eager results byte-exact against the NumPy
reference, torch.library.opcheck, Meta / FakeTensor (validation without data), errors that name
the argument and leave the caches untouched. The compile matrix: test_ikq_compile_matrix.py.
"""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("torch is not installed: the PyTorch adapter cannot be tested", allow_module_level=True)

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
from ascend_ops.indexer_k_quant_and_cache import reference, torch_ops  # noqa: E402,F401  (loads _torch)

import torch  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

from ikq_cases import FUSED, K_DTYPES, SPLIT, make  # noqa: E402

OP = torch.ops.ascend_ops.indexer_k_quant_and_cache.default
SCHEMA = ("ascend_ops::indexer_k_quant_and_cache(Tensor k, Tensor(a!) k_cache, Tensor slot_mapping, *, "
          "Tensor(b!)? k_scale_cache=None, int quant_block_size=128, str? scale_fmt=None) -> ()")


def strided_k(k):
    """k as a torch tensor with its row stride kept (a view of a wider tensor); bfloat16 from its bits."""
    wide = np.ascontiguousarray(k if k.flags.c_contiguous else k.base)
    if wide.dtype == np.uint16:
        t = torch.from_numpy(wide.view(np.int16).copy()).view(torch.bfloat16)
    else:
        t = torch.from_numpy(wide.copy())
    return t[:, : k.shape[1]]


def test_schema():
    assert str(OP._schema) == SCHEMA


@pytest.mark.parametrize("k_dtype", K_DTYPES)
@pytest.mark.parametrize("case", SPLIT[:4] + FUSED[:3], ids=str)
def test_eager_matches_reference_exactly(case, k_dtype):
    k, cache, slots, scales, kwargs = make(case, k_dtype, np.int64 if case.tokens % 2 else np.int32)
    want_cache, want_scales = reference.indexer_k_quant_and_cache(k, cache, slots, scales, **kwargs)
    tk = strided_k(k)
    tc = torch.from_numpy(np.ascontiguousarray(cache).copy())
    ts = None if scales is None else torch.from_numpy(np.ascontiguousarray(scales).copy())
    OP(tk, tc, torch.from_numpy(slots), k_scale_cache=ts, **kwargs)
    np.testing.assert_array_equal(tc.numpy().view(np.uint8), want_cache.view(np.uint8))
    if ts is not None:
        np.testing.assert_array_equal(ts.numpy(), want_scales)


def split_tensors(dtype=torch.bfloat16, tokens=6):
    gen = torch.Generator().manual_seed(0)
    k = torch.randn(tokens, 128, generator=gen).to(dtype)
    cache = torch.zeros(4, 8, 1, 128, dtype=torch.int8)
    scales = torch.zeros(4, 8, 1, 2, dtype=torch.float16)
    slots = torch.tensor([3, -1, 30, 0, 9, 17][:tokens], dtype=torch.int64)
    return k, cache, slots, scales


def test_opcheck():
    k, cache, slots, scales = split_tensors()
    torch.library.opcheck(OP, (k, cache, slots), {"k_scale_cache": scales, "quant_block_size": 64})
    kf = torch.randn(5, 128)
    fused = torch.zeros(3, 16, 128 + 4, dtype=torch.uint8)
    torch.library.opcheck(OP, (kf, fused, torch.tensor([0, 47, -1, 20, 5])), {"scale_fmt": "ue8m0"})


def test_meta_and_fake_validate_without_data():
    with FakeTensorMode():
        k, cache, slots, scales = split_tensors()
        OP(k, cache, slots, k_scale_cache=scales, quant_block_size=64)
        with pytest.raises(ValueError, match="quant_block_size should be > 0 and divide D = 128"):
            OP(k, cache, slots, k_scale_cache=scales, quant_block_size=48)
    meta = [t.to("meta") for t in split_tensors()]
    OP(meta[0], meta[1], meta[2], k_scale_cache=meta[3], quant_block_size=64)
    with pytest.raises(ValueError, match="k_scale_cache should be given"):
        OP(meta[0], meta[1], meta[2], quant_block_size=64)


@pytest.mark.parametrize("bad,exc,words", [
    (dict(quant_block_size=48), ValueError, "quant_block_size"),
    (dict(scale_fmt="ue8m0"), ValueError, "scale_fmt"),
    (dict(scale_fmt="e8m0"), ValueError, "scale_fmt should be None or 'ue8m0' but is 'e8m0'"),
    (dict(slots=torch.tensor([3, -1, 32, 0, 9, 17])), IndexError, r"slot_mapping\[2\] = 32"),
    (dict(k=torch.full((6, 128), 1e7, dtype=torch.bfloat16)), ValueError, "overflows float16"),
    (dict(scales=torch.zeros(4, 8, 1, 2, dtype=torch.bfloat16)), TypeError, "k_scale_cache should have dtype"),
], ids=["qbs", "ue8m0-split", "scale-fmt", "slot", "overflow", "scale-dtype"])
def test_errors_name_the_argument_and_leave_caches_untouched(bad, exc, words):
    k, cache, slots, scales = split_tensors()
    k, slots, scales = bad.pop("k", k), bad.pop("slots", slots), bad.pop("scales", scales)
    cache.fill_(7)
    scales.fill_(3)
    with pytest.raises(exc, match=words):
        OP(k, cache, slots, k_scale_cache=scales, **{"quant_block_size": 64, **bad})
    assert torch.all(cache == 7) and torch.all(scales == 3)


def test_caches_as_views_of_a_bigger_allocation():
    """k_cache and k_scale_cache as slices of [2, ...] allocations: only the slices' slots change."""
    k, _, slots, _ = split_tensors(torch.float32)
    caches = torch.randint(-128, 128, (2, 4, 8, 1, 128), dtype=torch.int8)
    scale_pool = torch.randn(2, 4, 8, 1, 2).to(torch.float16)
    before_c, before_s = caches.clone(), scale_pool.clone()
    OP(k, caches[1], slots, k_scale_cache=scale_pool[0], quant_block_size=64)
    want_c, want_s = reference.indexer_k_quant_and_cache(k.numpy(), before_c[1].numpy(), slots.numpy(),
                                                         before_s[0].numpy(), quant_block_size=64)
    assert torch.equal(caches[0], before_c[0]) and torch.equal(scale_pool[1], before_s[1])
    np.testing.assert_array_equal(caches[1].numpy(), want_c)
    np.testing.assert_array_equal(scale_pool[0].numpy(), want_s)
