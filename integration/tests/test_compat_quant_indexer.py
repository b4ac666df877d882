"""The quantised lightning indexer's drop-in call forms (PyTorch): vllm-ascend's
``torch.ops._C_ascend.npu_lightning_indexer_quant`` as its SFA backend calls it (TND query,
PA_BSND int8 key cache, key scales ``scale_cache.squeeze(2)``, float16 weights [T, N1, 1]), and
torch_npu's ``npu_quant_lightning_indexer`` (quant modes positional), against the NumPy
reference; what the torch_npu form refuses."""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
if importlib.util.find_spec("torch") is None:
    pytest.skip("torch is not installed", allow_module_level=True)
import torch  # noqa: E402


def _inputs():
    gen = torch.Generator().manual_seed(5)
    n1, d, block_size, blocks = 8, 32, 16, 6
    cu_q = torch.tensor([2, 5], dtype=torch.int32)  # two batches: 2 and 3 query tokens
    len_k = torch.tensor([20, 37], dtype=torch.int32)
    query = torch.randint(-127, 128, (5, n1, d), generator=gen, dtype=torch.int8)
    key = torch.randint(-127, 128, (blocks, block_size, 1, d), generator=gen, dtype=torch.int8)
    weights = torch.randn(5, n1, 1, generator=gen).half()
    qs = (torch.rand(5, n1, generator=gen) * 0.02 + 1e-3).half()
    scale_cache = (torch.rand(blocks, block_size, 1, 1, generator=gen) * 0.02 + 1e-3).half()
    block_table = torch.tensor([[4, 1, 0], [2, 5, 3]], dtype=torch.int32)
    return dict(query=query, key=key, weights=weights, query_dequant_scale=qs,
                key_dequant_scale=scale_cache.squeeze(2), actual_seq_lengths_query=cu_q,
                actual_seq_lengths_key=len_k, block_table=block_table)


def _reference(inputs, sparse_count):
    from ascend_ops.lightning_indexer_quant import reference

    a = {k: v.numpy() for k, v in inputs.items()}
    a["weights"] = a["weights"][..., 0]
    return reference.lightning_indexer_quant(**a, layout_query="TND", layout_key="PA_BSND",
                                             sparse_count=sparse_count, sparse_mode=3)[0]


def test_vllm_ascend_keyword_call():
    from ascend_ops.compat import vllm_ascend

    inputs = _inputs()
    got = vllm_ascend.npu_lightning_indexer_quant(**inputs, layout_query="TND", layout_key="PA_BSND",
                                                  sparse_count=16, sparse_mode=3)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.int32 and got.shape == (5, 1, 16)
    np.testing.assert_array_equal(got.numpy(), _reference(inputs, 16))


def test_torch_npu_positional_quant_modes():
    from ascend_ops.compat import torch_npu

    inputs = _inputs()
    pos = [inputs.pop(n) for n in ("query", "key", "weights", "query_dequant_scale", "key_dequant_scale")]
    got = torch_npu.npu_quant_lightning_indexer(*pos, 0, 0, **inputs, layout_query="TND", layout_key="PA_BSND",
                                                sparse_count=16, sparse_mode=3)
    names = ("query", "key", "weights", "query_dequant_scale", "key_dequant_scale")
    np.testing.assert_array_equal(got.numpy(), _reference(dict(zip(names, pos), **inputs), 16))


def test_torch_npu_defaults_are_bsnd():
    """torch_npu's layout defaults are BSND / BSND (ours: PA_BSND keys): a BSND call without layouts."""
    from ascend_ops.compat import torch_npu
    from ascend_ops.lightning_indexer_quant import reference

    gen = torch.Generator().manual_seed(1)
    q = torch.randint(-127, 128, (2, 3, 4, 16), generator=gen, dtype=torch.int8)
    k = torch.randint(-127, 128, (2, 40, 1, 16), generator=gen, dtype=torch.int8)
    w = torch.randn(2, 3, 4, generator=gen).half()
    qs = torch.rand(2, 3, 4, generator=gen).half()
    ks = torch.rand(2, 40, 1, generator=gen).half()
    got = torch_npu.npu_quant_lightning_indexer(q, k, w, qs, ks, 0, 0, sparse_count=8)
    want = reference.lightning_indexer_quant(q.numpy(), k.numpy(), w.numpy(), qs.numpy(), ks.numpy(),
                                             layout_query="BSND", layout_key="BSND", sparse_count=8)[0]
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("extra,words", [(dict(pre_tokens=128), "pre_tokens"), (dict(key_dtype=1), "key_dtype")])
def test_torch_npu_refuses_what_the_op_lacks(extra, words):
    from ascend_ops.compat import torch_npu

    inputs = _inputs()
    pos = [inputs.pop(n) for n in ("query", "key", "weights", "query_dequant_scale", "key_dequant_scale")]
    with pytest.raises(ValueError, match=words):
        torch_npu.npu_quant_lightning_indexer(*pos, 0, 0, **inputs, layout_query="TND", layout_key="PA_BSND",
                                              **extra)


def test_quant_mode_other_than_zero_is_the_ops_error():
    from ascend_ops.compat import torch_npu

    inputs = _inputs()
    pos = [inputs.pop(n) for n in ("query", "key", "weights", "query_dequant_scale", "key_dequant_scale")]
    with pytest.raises(ValueError, match="lightning_indexer_quant: key_quant_mode should be 0"):
        torch_npu.npu_quant_lightning_indexer(*pos, 0, 1, **inputs, layout_query="TND", layout_key="PA_BSND")
