"""The quantising modes' errors through the NumPy front door on every backend here (cpu, emu): the
contract's exception and message, and every cache byte untouched. Bad scale / offset values are
also found by the kernel's own check phase (emu with the host's data checks skipped): the same
exception and message as the host's, whichever core holds the first bad slot."""
import ml_dtypes
import numpy as np
import pytest

from ascend_ops.common.loader import load_native
from ascend_ops.reshape_and_cache import reshape_and_cache

from rac_cases import Shape
from rac_quant_cases import make_quant

core = load_native("ascend_ops.reshape_and_cache", "core")
# 100 tokens with rows of 32 / 64 elements: the int8 tiling runs them on one core (host/tiling_quant.cpp);
# the kernel check of multi-core sliced launches: test_rac_quant_split_numpy.py
SHAPE = Shape(100, 100, 2, 16, 32, 32, 4, padding=3)
BACKENDS = ("cpu", "emu")


def base(mode="int8", granularity="channel_flat", scale_dtype=np.float32):
    key, value, kc, vc, slots, kw = make_quant(SHAPE, "float16", mode, np.int64, seed=2, granularity=granularity,
                                               scale_dtype=scale_dtype, with_offset=mode == "int8")
    return [key, value, kc, vc, slots], kw


def poke(name, index, value):
    def change(args, kw):
        a = kw[name].copy()
        a.reshape(-1)[index] = value
        return args, {**kw, name: a}
    return change


def replace(**changes):
    def change(args, kw):
        kw = dict(kw)
        for k, v in changes.items():
            if v is None:
                kw.pop(k, None)
            else:
                kw[k] = v(kw.get(k)) if callable(v) else v
        return args, kw
    return change


def caches(**changes):
    def change(args, kw):
        args = list(args)
        for i, fn in changes.items():
            args[int(i[1:])] = fn(args[int(i[1:])])
        return args, kw
    return change


# (id, change, exception, words in the message)
VALUE_CASES = [
    ("k_scale-zero", poke("k_scale", 3, 0.0), ValueError, ["k_scale[3]", "finite and > 0", "is 0"]),
    ("k_scale-negative", poke("k_scale", 0, -0.5), ValueError, ["k_scale[0]", "is -0.5"]),
    ("v_scale-inf", poke("v_scale", 63, np.inf), ValueError, ["v_scale[63]", "is inf"]),
    ("v_scale-nan", poke("v_scale", 1, np.nan), ValueError, ["v_scale[1]", "nan"]),
    ("k_scale-negative-zero", poke("k_scale", 5, -0.0), ValueError, ["k_scale[5]", "is -0"]),
    ("k_offset-nan", poke("k_offset", 2, np.nan), ValueError, ["k_offset[2]", "should be finite"]),
    ("v_offset-neg-inf", poke("v_offset", 7, -np.inf), ValueError, ["v_offset[7]", "is -inf"]),
]
ARG_CASES = [
    ("unknown-mode", replace(kv_cache_dtype="fp16"), TypeError, ["kv_cache_dtype", "'fp16'"]),
    ("k_scale-missing", replace(k_scale=None), ValueError, ["k_scale is required", "'int8'"]),
    ("k_scale-shape", replace(k_scale=lambda s: s[:3]), ValueError, ["k_scale should be", "[2] (per head", "[32]",
                                                                     "shape [3]"]),
    ("v_scale-2d-wrong", replace(v_scale=lambda s: s.reshape(4, 16)), ValueError, ["v_scale should be", "[2, 32]"]),
    ("k_scale-int", replace(k_scale=lambda s: s.astype(np.int32)), TypeError, ["k_scale should have dtype float32"]),
    ("k_scale-float64", replace(k_scale=lambda s: s.astype(np.float64)), TypeError, ["k_scale", "float64"]),
    ("k_offset-shape", replace(k_offset=lambda s: s[:5]), ValueError, ["k_offset should be"]),
    ("key-int8", caches(a0=lambda a: a.astype(np.int8), a1=lambda a: a.astype(np.int8)), TypeError,
     ["key should have dtype float16, bfloat16 or float32", "'int8'"]),
    ("cache-dtype", caches(a2=lambda a: a.view(np.uint8)), TypeError, ["key_cache should have dtype int8",
                                                                       "kv_cache_dtype 'int8'", "uint8"]),
    ("fp8-int8-cache", replace(kv_cache_dtype="fp8", k_offset=None, v_offset=None), TypeError,
     ["key_cache should have dtype uint8", "'fp8_e4m3'"]),
    ("auto-with-scales", lambda a, kw: ([a[0], a[1], np.zeros((32, 4, 2, 16), np.float16),
                                         np.zeros((32, 4, 2, 32), np.float16), a[4]], {**kw, "kv_cache_dtype": "auto"}),
     ValueError, ["k_scale should be None with kv_cache_dtype 'auto'"]),
    ("v_scale-key-only", lambda a, kw: ([a[0], None, a[2], None, a[4]], {k: v for k, v in kw.items()
                                                                         if k != "v_offset"}),
     ValueError, ["v_scale should be None for a key-only cache"]),
]
FP8_CASES = [
    ("fp8-offset", lambda a, kw: (a, {**kw, "k_offset": np.zeros(1, np.float32)}), ValueError,
     ["k_offset should be None with kv_cache_dtype 'fp8_e4m3'"]),
    ("fp8-e5m2-int8-cache", lambda a, kw: ([a[0], a[1], a[2].view(np.int8), a[3], a[4]],
                                           {**kw, "kv_cache_dtype": "fp8_e5m2"}), TypeError,
     ["key_cache should have dtype uint8", "'fp8_e5m2'"]),
]


def check_untouched_raise(backend, args, kw, exc, words):
    before = [None if c is None else c.copy() for c in (args[2], args[3])]
    with pytest.raises(exc) as info:
        reshape_and_cache(*args, **kw, backend=backend)
    message = str(info.value)
    assert message.startswith("reshape_and_cache:"), message
    for w in words:
        assert w in message, f"{w!r} not in {message!r}"
    for c, b in zip((args[2], args[3]), before):
        if c is not None:
            assert c.tobytes() == b.tobytes()
    return message


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case_id,change,exc,words", VALUE_CASES + ARG_CASES, ids=[c[0] for c in VALUE_CASES + ARG_CASES])
def test_int8_errors_leave_caches_untouched(backend, case_id, change, exc, words):
    args, kw = change(*base())
    check_untouched_raise(backend, args, kw, exc, words)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case_id,change,exc,words", FP8_CASES, ids=[c[0] for c in FP8_CASES])
def test_fp8_errors_leave_caches_untouched(backend, case_id, change, exc, words):
    args, kw = change(*base("fp8"))
    check_untouched_raise(backend, args, kw, exc, words)


@pytest.mark.parametrize("scale_dtype", [np.float16, ml_dtypes.bfloat16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_half_scale_values_are_checked(backend, scale_dtype):
    args, kw = poke("v_scale", 4, -np.inf)(*base(granularity="channel2d", scale_dtype=scale_dtype))
    check_untouched_raise(backend, args, kw, ValueError, ["v_scale[4]", "is -inf"])


@pytest.mark.parametrize("mode", ["fp8", "fp8_e4m3", "fp8_e5m2"])
def test_fp8_is_refused_on_the_kernel_backends(mode):
    """Atlas A2 / A3 have no fp8 conversion: the emu (and npu) backend refuses the mode by name."""
    args, kw = base(mode)
    before = args[2].copy()
    with pytest.raises(ValueError, match=f"kv_cache_dtype '{'fp8_e4m3' if mode == 'fp8' else mode}' runs on the cpu "
                                         "backend only"):
        reshape_and_cache(*args, **kw, backend="emu")
    assert args[2].tobytes() == before.tobytes()


# --- the kernel's own check (emu, host data checks skipped) ------------------------------------
KERNEL_CASES = [
    ("k_scale", poke("k_scale", 10, 0.0), {}),
    ("v_offset", poke("v_offset", 0, np.nan), {}),
    ("scale-before-slot", poke("v_scale", 2, -1.0), {60: 10**6}),  # the host checks scales first
    ("slot-of-token-7", lambda a, kw: (a, kw), {7: 128}),
]


@pytest.mark.parametrize("soc", ["Ascend910B2", "Ascend910B4"])
@pytest.mark.parametrize("case_id,change,bad_slots", KERNEL_CASES, ids=[c[0] for c in KERNEL_CASES])
def test_kernel_check_is_the_host_check(soc, case_id, change, bad_slots):
    args, kw = change(*base())
    for t, s in bad_slots.items():
        args[4][t] = s
    before = [args[2].copy(), args[3].copy()]
    with pytest.raises(Exception) as host:
        core.run_cpu(*args, **kw)
    with pytest.raises(Exception) as kernel:
        core.run_emu(*args, **kw, soc=soc, host_data_checks=False)
    assert type(kernel.value) is type(host.value)
    assert str(kernel.value) == str(host.value)
    assert args[2].tobytes() == before[0].tobytes() and args[3].tobytes() == before[1].tobytes()


def test_clean_scales_pass_the_kernel_check_and_are_written():
    """The correct twin of the kernel-check cases: valid scales, the caches written as on cpu."""
    args, kw = base()
    want = [args[2].copy(), args[3].copy()]
    core.run_cpu(args[0], args[1], want[0], want[1], args[4], **kw)
    core.run_emu(*args, **kw, host_data_checks=False)
    assert args[2].tobytes() == want[0].tobytes() and args[3].tobytes() == want[1].tobytes()


# The kernel's scale check decides on the raw bits by vector integer work (a value is a valid
# scale exactly when its bits, as a signed integer, lie in [1, the largest finite's bits]): the
# edges of that interval in each dtype, found by the kernel alone (host checks skipped).
EDGE_DTYPES = {"float32": (np.float32, np.uint32), "float16": (np.float16, np.uint16),
               "bfloat16": (ml_dtypes.bfloat16, np.uint16)}
VALID_EDGES = {"float32": [0x00000001, 0x7F7FFFFF, 0x00800000], "float16": [0x0001, 0x7BFF, 0x0400],
               "bfloat16": [0x0001, 0x7F7F, 0x0080]}
INVALID_EDGES = {"float32": [0x00000000, 0x80000000, 0x7F800000, 0x7FC00000, 0xFF800000, 0x80000001, 0xFFFFFFFF],
                 "float16": [0x0000, 0x8000, 0x7C00, 0x7E00, 0xFC00, 0x8001, 0xFFFF],
                 "bfloat16": [0x0000, 0x8000, 0x7F80, 0x7FC0, 0xFF80, 0x8001, 0xFFFF]}


def with_bits(kw, name, index, dtype_name, bits):
    dtype, uint = EDGE_DTYPES[dtype_name]
    scale = kw[name].astype(dtype)
    raw = scale.view(uint).copy()
    raw.reshape(-1)[index] = bits
    return {**kw, name: raw.view(dtype)}


@pytest.mark.parametrize("dtype_name", list(EDGE_DTYPES))
def test_kernel_scale_check_edges(dtype_name):
    args, kw = base(granularity="channel_flat")
    kw = {k: v for k, v in kw.items() if not k.endswith("offset")}
    kw = {**kw, "k_scale": kw["k_scale"].astype(EDGE_DTYPES[dtype_name][0]),
          "v_scale": kw["v_scale"].astype(EDGE_DTYPES[dtype_name][0])}
    for i, bits in enumerate(VALID_EDGES[dtype_name]):  # the correct twin: written as on cpu
        good = with_bits(kw, "k_scale", 3 + i, dtype_name, bits)
        want = [args[2].copy(), args[3].copy()]
        core.run_cpu(args[0], args[1], want[0], want[1], args[4], **good)
        got = [args[2].copy(), args[3].copy()]
        core.run_emu(args[0], args[1], got[0], got[1], args[4], **good, host_data_checks=False)
        assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()
    for name in ("k_scale", "v_scale"):
        for bits in INVALID_EDGES[dtype_name]:
            bad = with_bits(kw, name, 20, dtype_name, bits)
            with pytest.raises(ValueError) as host:
                core.run_cpu(*[a.copy() for a in args], **bad)
            caches = [args[2].copy(), args[3].copy()]
            with pytest.raises(ValueError) as kernel:
                core.run_emu(args[0], args[1], caches[0], caches[1], args[4], **bad, host_data_checks=False)
            assert str(kernel.value) == str(host.value)
            assert f"{name}[20]" in str(kernel.value)
            assert caches[0].tobytes() == args[2].tobytes() and caches[1].tobytes() == args[3].tobytes()
