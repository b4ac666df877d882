"""The quantising modes with MindSpore tensors: PyNative, ms.jit and a GRAPH_MODE Cell, exact
against the reference; a bad scale refused with both caches untouched (PyNative and graph)."""
from __future__ import annotations

import numpy as np
import pytest

ms = pytest.importorskip("mindspore", reason="mindspore is not installed")  # before the adapter
from mindspore import Parameter, Tensor, nn  # noqa: E402

import ascend_ops.reshape_and_cache as rac  # noqa: E402
from ascend_ops.common import check_errors  # noqa: E402
from ascend_ops.devkit.testing import ms_synchronize  # noqa: E402
from ascend_ops.reshape_and_cache import ms as rac_ms  # noqa: E402
from rac_cases import Shape  # noqa: E402
from rac_quant_cases import expected, make_quant  # noqa: E402

SHAPE = Shape(19, 13, 2, 32, 64, 5, 16, padding=3)


@pytest.fixture(autouse=True)
def _pynative_and_tmp_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a failing graph writes rank_0/ into the cwd
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


def case(mode, granularity="head"):
    key, value, kc, vc, slots, kw = make_quant(SHAPE, "float16", mode, np.int32, seed=6, granularity=granularity,
                                               with_offset=mode == "int8")
    want = expected(key, value, kc, vc, slots, **kw)
    scales = {k: Tensor(np.ascontiguousarray(v)) for k, v in kw.items() if k != "kv_cache_dtype"}
    t = [Tensor(np.ascontiguousarray(a)) for a in (key, value, kc, vc, slots)]
    return t, mode, scales, want


@pytest.mark.parametrize("granularity", ["tensor1", "head", "channel2d"])
@pytest.mark.parametrize("mode", ["int8", "fp8", "fp8_e5m2"])
def test_pynative(mode, granularity):
    t, mode, scales, want = case(mode, granularity)
    assert rac.reshape_and_cache(*t, kv_cache_dtype=mode, **scales) is None
    np.testing.assert_array_equal(t[2].asnumpy(), want[0])
    np.testing.assert_array_equal(t[3].asnumpy(), want[1])


@pytest.mark.parametrize("mode", ["int8", "fp8_e4m3"])
def test_jit(mode):
    t, mode, scales, want = case(mode)
    t[2], t[3] = Parameter(t[2], name="key_cache"), Parameter(t[3], name="value_cache")
    offsets = (scales.get("k_offset"), scales.get("v_offset"))

    @ms.jit
    def step(key, value, key_cache, value_cache, slots, k_scale, v_scale):
        return rac_ms.reshape_and_cache(key, value, key_cache, value_cache, slots, kv_cache_dtype=mode,
                                        k_scale=k_scale, v_scale=v_scale, k_offset=offsets[0], v_offset=offsets[1])

    step(*t, scales["k_scale"], scales["v_scale"])
    np.testing.assert_array_equal(t[2].asnumpy(), want[0])
    np.testing.assert_array_equal(t[3].asnumpy(), want[1])


class _Int8Writer(nn.Cell):
    def __init__(self, key_cache, value_cache, scales):
        super().__init__()
        self.key_cache = Parameter(key_cache, name="key_cache")
        self.value_cache = Parameter(value_cache, name="value_cache")
        self.scales = scales

    def construct(self, key, value, slots):
        rac_ms.reshape_and_cache(key, value, self.key_cache, self.value_cache, slots, kv_cache_dtype="int8",
                                 **self.scales)
        return self.key_cache + 0


def test_graph_mode_cell():
    ms.set_context(mode=ms.GRAPH_MODE)
    t, _, scales, want = case("int8", "channel2d")
    net = _Int8Writer(t[2], t[3], scales)
    out = net(t[0], t[1], t[4])
    np.testing.assert_array_equal(net.key_cache.asnumpy(), want[0])
    np.testing.assert_array_equal(net.value_cache.asnumpy(), want[1])
    np.testing.assert_array_equal(out.asnumpy(), want[0])  # a later op sees the write


def test_pynative_bad_scale_is_refused_untouched():
    t, mode, scales, _ = case("int8")
    before = [t[2].asnumpy().copy(), t[3].asnumpy().copy()]
    bad = scales["v_scale"].asnumpy().copy()
    bad[1] = 0.0
    # scale values, like slots, are data: checked in MindSpore's queue, raised at its next sync
    rac.reshape_and_cache(*t, kv_cache_dtype=mode, **{**scales, "v_scale": Tensor(bad)})
    with pytest.raises(ValueError, match=r"^reshape_and_cache: v_scale\[1\] \(flat index\) should be finite and > 0 "
                                         r"but is 0"):
        ms_synchronize()
    check_errors()  # raised once
    np.testing.assert_array_equal(t[2].asnumpy(), before[0])
    np.testing.assert_array_equal(t[3].asnumpy(), before[1])
