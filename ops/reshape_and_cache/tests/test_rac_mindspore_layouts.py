"""reshape_and_cache's cache layouts with MindSpore tensors. MindSpore's front door refuses a
non-contiguous written tensor (common's ms_front: an in-place write must reach the tensor's own
storage), so strided cache views are a torch / NumPy form; the head-major cache (cache_mode 2)
and vLLM's paged layout (cache_mode 3) are contiguous tensors MindSpore passes in PyNative and in
a GRAPH_MODE Cell. Also ms_custom_ops' [B, S, H*D] key with head_num and an int8 key beside a
float16 value (dtypes per pair)."""
from __future__ import annotations

import numpy as np
import pytest

ms = pytest.importorskip("mindspore", reason="mindspore is not installed")  # before the adapter
from mindspore import Tensor, nn  # noqa: E402

import ascend_ops.reshape_and_cache as rac  # noqa: E402
from ascend_ops.reshape_and_cache import ms as rac_ms  # noqa: E402
from ascend_ops.reshape_and_cache import reference  # noqa: E402

NB, BS, H, D, T = 4, 8, 2, 32, 11


@pytest.fixture(autouse=True)
def _pynative_and_tmp_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


def _case(mode, seed=0):
    rng = np.random.default_rng(seed)
    key = rng.standard_normal((T, H, D)).astype(np.float16)
    value = rng.standard_normal((T, H, D)).astype(np.float16)
    if mode == 2:
        shapes = [(NB, H, BS, D)] * 2
    else:
        shapes = [(NB, H, D // 8, BS, 8), (NB, H, D, BS)]
    caches = [rng.standard_normal(s).astype(np.float16) for s in shapes]
    slots = rng.permutation(NB * BS)[:T].astype(np.int32)
    slots[2] = -1
    want = reference.reshape_and_cache(key, value, caches[0], caches[1], slots, cache_mode=mode)
    return key, value, caches, slots, want


class _Write(nn.Cell):
    def __init__(self, mode):
        super().__init__()
        self.mode = mode

    def construct(self, key, value, key_cache, value_cache, slots):
        rac_ms.reshape_and_cache(key, value, key_cache, value_cache, slots, cache_mode=self.mode)
        return key_cache


@pytest.mark.parametrize("mode", [2, 3], ids=["head_major", "vllm_paged"])
def test_pynative_layouts(mode):
    key, value, caches, slots, want = _case(mode)
    kc, vc = Tensor(caches[0]), Tensor(caches[1])
    rac.reshape_and_cache(Tensor(key), Tensor(value), kc, vc, Tensor(slots), cache_mode=mode)
    np.testing.assert_array_equal(kc.asnumpy(), want[0])
    np.testing.assert_array_equal(vc.asnumpy(), want[1])


def test_graph_mode_head_major():
    key, value, caches, slots, want = _case(2, seed=1)
    ms.set_context(mode=ms.GRAPH_MODE)
    kc, vc = ms.Parameter(Tensor(caches[0]), name="kc"), ms.Parameter(Tensor(caches[1]), name="vc")
    _Write(2)(Tensor(key), Tensor(value), kc, vc, Tensor(slots))
    np.testing.assert_array_equal(kc.asnumpy(), want[0])
    np.testing.assert_array_equal(vc.asnumpy(), want[1])


def test_pynative_batch_seq_hidden_key_and_dtype_pairs():
    """ms_custom_ops' form on the op itself: key int8 [B, S, H*D], value float16 [B, S, H*D],
    head_num; int8 key_cache beside a float16 value_cache."""
    rng = np.random.default_rng(2)
    key = rng.integers(-128, 128, size=(3, 4, H * D), dtype=np.int8)
    value = rng.standard_normal((3, 4, H * D)).astype(np.float16)
    kc = rng.integers(-128, 128, size=(NB, BS, H, D), dtype=np.int8)
    vc = rng.standard_normal((NB, BS, H, D)).astype(np.float16)
    slots = rng.permutation(NB * BS)[:12].astype(np.int32)
    want_k = reference.reshape_and_cache(key.reshape(12, H, D), None, kc, None, slots)[0]
    want_v = reference.reshape_and_cache(value.reshape(12, H, D), None, vc, None, slots)[0]
    tk, tv = Tensor(kc), Tensor(vc)
    rac.reshape_and_cache(Tensor(key), Tensor(value), tk, tv, Tensor(slots), head_num=H)
    np.testing.assert_array_equal(tk.asnumpy(), want_k)
    np.testing.assert_array_equal(tv.asnumpy(), want_v)
