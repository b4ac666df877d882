"""The quantising modes through the PyTorch adapter: eager exact against the reference (every
mode, float16 / bfloat16 / float32 inputs, scale dtypes), Meta / FakeTensor (checks without
data), opcheck, errors that leave both caches untouched, and the torchair converter's refusal."""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("torch is not installed: the PyTorch adapter cannot be tested", allow_module_level=True)

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
import ml_dtypes  # noqa: E402

from ascend_ops.devkit import torchair_testing  # noqa: E402
from ascend_ops.reshape_and_cache import reference, torch_ops  # noqa: E402,F401
import torch  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

from rac_cases import Shape  # noqa: E402
from rac_quant_cases import MODES, make_quant  # noqa: E402

OP = torch.ops.ascend_ops.reshape_and_cache.default
SHAPE = Shape(19, 13, 2, 32, 64, 5, 16, key_pad=32, padding=3)
TORCH = {np.dtype(np.float16): torch.float16, np.dtype(np.float32): torch.float32,
         np.dtype(ml_dtypes.bfloat16): torch.bfloat16}


def to_torch(a):
    if a is None:
        return None
    a = np.asarray(a)
    if a.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(np.ascontiguousarray(a).view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(np.array(a, copy=True))


def case(mode, in_dtype="bfloat16", granularity="channel_flat", scale_dtype=np.float32, key_only=False):
    key, value, kc, vc, slots, kw = make_quant(SHAPE, in_dtype, mode, np.int64, seed=4, granularity=granularity,
                                               scale_dtype=scale_dtype, with_offset=mode == "int8")
    if key_only:
        value = vc = None
        kw = {k: v for k, v in kw.items() if not k.startswith("v_")}
    want = reference.reshape_and_cache(key, value, kc, vc, slots, **kw)
    t_kw = {k: (v if isinstance(v, str) else to_torch(v)) for k, v in kw.items()}
    key_t = to_torch(np.ascontiguousarray(key))
    return [key_t, to_torch(value), to_torch(kc), to_torch(vc), to_torch(slots)], t_kw, want


def same(t, want):
    assert np.array_equal(t.numpy().view(np.uint8), np.asarray(want).view(np.uint8))


@pytest.mark.parametrize("key_only", [False, True], ids=["kv", "key-only"])
@pytest.mark.parametrize("in_dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("mode", MODES)
def test_eager_matches_reference(mode, in_dtype, key_only):
    args, kw, want = case(mode, in_dtype, key_only=key_only)
    OP(*args, **kw)
    same(args[2], want[0])
    if not key_only:
        same(args[3], want[1])


@pytest.mark.parametrize("scale_dtype", [np.float16, ml_dtypes.bfloat16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("granularity", ["tensor0d", "head", "channel2d"])
def test_scale_dtypes_and_granularities(granularity, scale_dtype):
    args, kw, want = case("int8", "float16", granularity, scale_dtype)
    OP(*args, **kw)
    same(args[2], want[0])
    same(args[3], want[1])


@pytest.mark.parametrize("mode", ["int8", "fp8"])
def test_opcheck(mode):
    args, kw, _ = case(mode)
    torch.library.opcheck(OP, tuple(args), kw)


def test_meta_checks_the_new_arguments_without_data():
    args, kw, _ = case("int8")
    meta = [t.to("meta") for t in args]
    meta_kw = {k: (v.to("meta") if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
    assert OP(*meta, **meta_kw) is None
    with pytest.raises(ValueError, match="k_scale should be"):
        OP(*meta, **{**meta_kw, "k_scale": torch.empty(3, device="meta")})
    with pytest.raises(TypeError, match="key_cache should have dtype int8"):
        OP(meta[0], meta[1], meta[2].to(torch.uint8), meta[3], meta[4], **meta_kw)


def test_fake_tensor_mode():
    args, kw, _ = case("fp8_e4m3")
    with FakeTensorMode() as mode:
        fakes = [mode.from_tensor(t) for t in args]
        fake_kw = {k: (mode.from_tensor(v) if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
        assert OP(*fakes, **fake_kw) is None


BAD = [
    ("scale-zero", lambda kw: {**kw, "k_scale": torch.zeros_like(kw["k_scale"])}, ValueError, r"k_scale\[0\].*> 0"),
    ("scale-negative", lambda kw: {**kw, "v_scale": -kw["v_scale"]}, ValueError, r"v_scale\[0\].*> 0 but is -"),
    ("scale-nan", lambda kw: {**kw, "k_scale": torch.where(torch.arange(kw["k_scale"].numel()) == 5,
                                                             torch.tensor(float("nan")), kw["k_scale"])},
     ValueError, r"k_scale\[5\].*nan"),
    ("offset-inf", lambda kw: {**kw, "k_offset": torch.full_like(kw["k_offset"], float("inf"))}, ValueError,
     r"k_offset\[0\].*finite but is inf"),
    ("scale-shape", lambda kw: {**kw, "k_scale": kw["k_scale"][:5]}, ValueError, r"k_scale should be \[\] or \[1\]"),
    ("scale-int", lambda kw: {**kw, "k_scale": kw["k_scale"].to(torch.int32)}, TypeError, r"k_scale should have dtype"),
    ("scale-missing", lambda kw: {k: v for k, v in kw.items() if k != "v_scale"}, ValueError, r"v_scale is required"),
    ("unknown-mode", lambda kw: {**kw, "kv_cache_dtype": "int4"}, TypeError, r"kv_cache_dtype should be .* 'int4'"),
    ("offset-with-fp8", lambda kw: {**kw, "kv_cache_dtype": "fp8"}, TypeError, r"key_cache should have dtype uint8"),
    ("scales-with-auto", lambda kw: {**kw, "kv_cache_dtype": "auto"}, TypeError, r"key_cache should have dtype bfloat16"),
]


@pytest.mark.parametrize("change,exc,pattern", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input_leaves_caches_untouched(change, exc, pattern):
    args, kw, _ = case("int8")
    before = [args[2].clone(), args[3].clone()]
    with pytest.raises(exc, match=pattern) as info:
        OP(*args, **change(kw))
    assert str(info.value).startswith("reshape_and_cache:")
    assert torch.equal(args[2], before[0]) and torch.equal(args[3], before[1])


@pytest.fixture
def stand_in_torchair(monkeypatch):
    yield from torchair_testing.stand_in_torchair(monkeypatch, "ascend_ops.reshape_and_cache")


def test_torchair_converter_refuses_quantising_modes(stand_in_torchair):
    assert torch_ops.register_torchair_converter() is True
    [(_, fn)] = stand_in_torchair["register"]
    tensors = {name: object() for name in ("key", "value", "key_cache", "value_cache", "slot_mapping")}
    with pytest.raises(NotImplementedError, match="kv_cache_dtype='auto' only"):
        fn(**tensors, kv_cache_dtype="int8", k_scale=object(), v_scale=object(), meta_outputs=None)


def test_flush_denormal_changes_no_code():
    """float16 subnormal inputs and scales with the thread's flush-to-zero / denormals-are-zero
    on (torch.set_flush_denormal): the same codes as the reference (no float32 subnormal is
    formed when widening float16)."""
    sub = np.array([2.0**-24, 3 * 2.0**-24, 2.0**-15, -(2.0**-20), 1023 * 2.0**-24], np.float16)
    key = torch.from_numpy(np.resize(sub, (4, 1, 32)).copy())
    slots = torch.arange(4)
    for mode, scale in (("fp8_e4m3", 2.0**-20), ("int8", 2.0**-24)):
        s = np.array([scale], np.float16)  # 2^-24: itself a float16 subnormal
        cache = torch.zeros(4, 1, 1, 32, dtype=torch.int8 if mode == "int8" else torch.uint8)
        want = reference.reshape_and_cache(key.numpy(), None, cache.numpy(), None, slots.numpy(),
                                           kv_cache_dtype=mode, k_scale=s)[0]
        if not torch.set_flush_denormal(True):
            pytest.skip("this CPU cannot flush denormals")
        try:
            OP(key, None, cache, None, slots, kv_cache_dtype=mode, k_scale=torch.from_numpy(s))
        finally:
            torch.set_flush_denormal(False)
        same(cache, want)
        assert cache.numpy().any()
