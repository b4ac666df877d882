"""reshape_and_cache with MindSpore tensors beyond key + value ND: key-only caches, FRACTAL_NZ
caches (cache_mode 1) and [T, H*D] inputs with head_num, in PyNative, ms.jit and a GRAPH_MODE
Cell, exact against the reference; a half key-only call refused with the caches untouched.
"""
from __future__ import annotations

import numpy as np
import pytest

ms = pytest.importorskip("mindspore", reason="mindspore is not installed")  # before the adapter
from mindspore import Parameter, Tensor, nn  # noqa: E402

import ascend_ops.reshape_and_cache as rac  # noqa: E402
from ascend_ops.reshape_and_cache import ms as rac_ms  # noqa: E402
from ascend_ops.reshape_and_cache import reference  # noqa: E402
from rac_cases import Shape, make  # noqa: E402

SHAPE = Shape(19, 13, 2, 32, 64, 5, 16, padding=3)
FORMS = ["key_only", "nz", "nz+key_only", "head_num", "nz+head_num+key_only"]


@pytest.fixture(autouse=True)
def _pynative_and_tmp_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


def arrays(form, seed=0):
    key, value, key_cache, value_cache, slots = make(SHAPE, "float16", np.int32, seed=seed)
    attrs = dict(cache_mode=0, head_num=None)
    if "nz" in form:
        key_cache, value_cache = reference.nd_to_nz(key_cache), reference.nd_to_nz(value_cache)
        attrs["cache_mode"] = 1
    if "key_only" in form:
        value = value_cache = None
    want = reference.reshape_and_cache(key, value, key_cache, value_cache, slots, cache_mode=attrs["cache_mode"])
    if "head_num" in form:
        key = key.reshape(key.shape[0], -1)
        value = None if value is None else value.reshape(value.shape[0], -1)
        attrs["head_num"] = SHAPE.heads
    return (key, value, key_cache, value_cache, slots), attrs, want


def tensors(args, cache_type=Tensor):
    out = [None if a is None else Tensor(np.ascontiguousarray(a)) for a in args]
    if cache_type is Parameter:
        out[2] = Parameter(out[2], name="key_cache")
        if out[3] is not None:
            out[3] = Parameter(out[3], name="value_cache")
    return out


def check(t, want):
    np.testing.assert_array_equal(t[2].asnumpy(), want[0])
    if want[1] is not None:
        np.testing.assert_array_equal(t[3].asnumpy(), want[1])


@pytest.mark.parametrize("form", FORMS)
def test_pynative(form):
    args, attrs, want = arrays(form)
    t = tensors(args)
    assert rac.reshape_and_cache(*t, **attrs) is None
    check(t, want)


@pytest.mark.parametrize("form", FORMS)
def test_jit(form):
    args, attrs, want = arrays(form, seed=1)
    t = tensors(args, Parameter)

    if "key_only" in form:
        @ms.jit
        def step(key, key_cache, slots):
            return rac_ms.reshape_and_cache(key, None, key_cache, None, slots, attrs["cache_mode"], attrs["head_num"])
        step(t[0], t[2], t[4])
    else:
        @ms.jit
        def step(key, value, key_cache, value_cache, slots):
            return rac_ms.reshape_and_cache(key, value, key_cache, value_cache, slots, attrs["cache_mode"],
                                            attrs["head_num"])
        step(*t)
    check(t, want)


class _KeyCacheWriter(nn.Cell):
    """A DeepSeek-style key-only cache (e.g. the indexer's key cache) updated in GRAPH_MODE."""

    def __init__(self, key_cache, cache_mode):
        super().__init__()
        self.key_cache = Parameter(key_cache, name="key_cache")
        self.cache_mode = cache_mode

    def construct(self, key, slots):
        rac_ms.reshape_and_cache(key, None, self.key_cache, None, slots, self.cache_mode)
        return self.key_cache + 0


@pytest.mark.parametrize("cache_mode", [0, 1], ids=["nd", "nz"])
def test_graph_mode_cell_key_only(cache_mode):
    ms.set_context(mode=ms.GRAPH_MODE)
    args, _, want = arrays("key_only+nz" if cache_mode else "key_only", seed=2)
    net = _KeyCacheWriter(Tensor(args[2]), cache_mode)
    out = net(Tensor(args[0]), Tensor(args[4]))
    np.testing.assert_array_equal(net.key_cache.asnumpy(), want[0])
    np.testing.assert_array_equal(out.asnumpy(), want[0])  # a later op sees the write


def test_pynative_half_key_only_is_refused_untouched():
    args, _, _ = arrays("nd")
    t = tensors(args)
    before = [t[2].asnumpy().copy(), t[3].asnumpy().copy()]
    with pytest.raises(ValueError, match="value_cache should be given when value is"):
        rac.reshape_and_cache(t[0], t[1], t[2], None, t[4])
    np.testing.assert_array_equal(t[2].asnumpy(), before[0])
    with pytest.raises(ValueError, match="multiple of the fractal width"):
        rac.reshape_and_cache(t[0][:, :, :8], None, t[2], None, t[4], cache_mode=1)
    np.testing.assert_array_equal(t[2].asnumpy(), before[0])
