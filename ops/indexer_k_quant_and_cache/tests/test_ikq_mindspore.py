"""indexer_k_quant_and_cache with MindSpore tensors: PyNative, ms.jit and a GRAPH_MODE Cell.

Results byte-exact against the NumPy reference (split int8 with float16 / float32 scales, fused
fp8); bad inputs raise the right exception naming the argument and leave both caches unchanged;
a built-in op reading the cache after the write sees it.
"""
from __future__ import annotations

import numpy as np
import pytest

ms = pytest.importorskip("mindspore", reason="mindspore is not installed")  # before the adapter
from mindspore import Parameter, Tensor, nn  # noqa: E402

from ascend_ops.common import check_errors  # noqa: E402
from ascend_ops.devkit.testing import ms_synchronize  # noqa: E402
import ascend_ops.indexer_k_quant_and_cache as ikq  # noqa: E402
from ascend_ops.indexer_k_quant_and_cache import ms as ikq_ms  # noqa: E402
from ascend_ops.indexer_k_quant_and_cache import reference  # noqa: E402
from ikq_cases import Case, make  # noqa: E402

CASES = [
    Case(19, 15, 128, 64, 5, 16, padding=3, zero_rows=2),
    Case(9, 9, 64, 32, 3, 4, rank4=False, scale_dtype="float32"),
    Case(12, 10, 128, 128, 3, 8, layout="fused", scale_fmt="ue8m0", padding=2),
    Case(7, 7, 128, 64, 2, 8, layout="fused"),
]


@pytest.fixture(autouse=True)
def _pynative_and_tmp_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


def _k(array, k_dtype):
    if k_dtype == "bfloat16":
        return Tensor((array.astype(np.uint32) << 16).view(np.float32), dtype=ms.bfloat16)
    return Tensor(np.ascontiguousarray(array))


def _make(case, k_dtype, seed=0, cache_type=Tensor):
    k, cache, slots, scales, kwargs = make(case, k_dtype, np.int64 if seed % 2 else np.int32, seed)
    want = reference.indexer_k_quant_and_cache(k, cache, slots, scales, **kwargs)
    tc = cache_type(Tensor(cache.copy()), name="k_cache") if cache_type is Parameter else Tensor(cache.copy())
    ts = None
    if scales is not None:
        ts = Parameter(Tensor(scales.copy()), name="k_scale_cache") if cache_type is Parameter else Tensor(scales.copy())
    return (_k(k, k_dtype), tc, Tensor(slots), ts), kwargs, want


def _assert(tc, ts, want):
    np.testing.assert_array_equal(tc.asnumpy().view(np.uint8), want[0].view(np.uint8))
    if want[1] is not None:
        np.testing.assert_array_equal(ts.asnumpy(), want[1])


@pytest.mark.parametrize("k_dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_pynative(case, k_dtype):
    (k, tc, slots, ts), kwargs, want = _make(case, k_dtype)
    assert ikq.indexer_k_quant_and_cache(k, tc, slots, k_scale_cache=ts, **kwargs) is None
    _assert(tc, ts, want)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_jit_function(case):
    qbs, fmt = case.qbs, case.scale_fmt

    @ms.jit
    def step(k, kc, s, sc):
        ikq_ms.indexer_k_quant_and_cache(k, kc, s, sc, qbs, fmt)
        return kc.astype(ms.float32)  # a built-in op reading the cache after the write

    (k, tc, slots, ts), _, want = _make(case, "bfloat16", seed=1, cache_type=Parameter)
    out = step(k, tc, slots, ts)
    _assert(tc, ts, want)
    np.testing.assert_array_equal(out.asnumpy(), want[0].astype(np.float32))


class _Writer(nn.Cell):
    def __init__(self, cache, scales, qbs):
        super().__init__()
        self.k_cache = Parameter(cache, name="k_cache")
        self.k_scale_cache = Parameter(scales, name="k_scale_cache")
        self.op = ikq_ms.IndexerKQuantAndCache()
        self.qbs = qbs

    def construct(self, k, slots):
        self.op(k, self.k_cache, slots, self.k_scale_cache, self.qbs)
        return self.k_cache.astype(ms.float32)


def test_graph_mode_cell_updates_parameters_in_place():
    ms.set_context(mode=ms.GRAPH_MODE)
    case = CASES[0]
    (k, tc, slots, ts), _, want = _make(case, "float16", seed=2)
    cell = _Writer(tc, ts, case.qbs)
    out = cell(k, slots)
    _assert(cell.k_cache, cell.k_scale_cache, want)
    np.testing.assert_array_equal(out.asnumpy(), want[0].astype(np.float32))


@pytest.mark.parametrize("over,exc,words", [
    (dict(quant_block_size=48), ValueError, "quant_block_size"),
    (dict(scale_fmt="ue8m0"), ValueError, "scale_fmt"),
    (dict(slot=40), IndexError, "slot_mapping"),
    (dict(huge=True), ValueError, "overflows float16"),
], ids=["qbs", "ue8m0-split", "slot", "overflow"])
def test_bad_input_leaves_caches_untouched(over, exc, words):
    case = CASES[0]
    k, cache, slots, scales, kwargs = make(case, "bfloat16", np.int64, 3)
    if over.pop("slot", None) is not None:
        slots[4] = 80 * 16
    if over.pop("huge", False):
        k[5, 3] = 0x4B18
        slots[5] = 5
    kwargs.update(over)
    tc, ts = Tensor(cache.copy()), Tensor(scales.copy())
    with pytest.raises(exc, match=words):
        ikq.indexer_k_quant_and_cache(_k(k, "bfloat16"), tc, Tensor(slots), k_scale_cache=ts, **kwargs)
        ms_synchronize()  # data errors surface at the next synchronisation
    check_errors()
    np.testing.assert_array_equal(tc.asnumpy(), cache)
    np.testing.assert_array_equal(ts.asnumpy(), scales)
