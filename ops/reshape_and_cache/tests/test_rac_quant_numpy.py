"""The quantising modes (kv_cache_dtype "int8", "fp8", "fp8_e4m3", "fp8_e5m2") through the NumPy
front door, golden against the reference written from the contract: codes byte-exact (the CPU
divides in IEEE float32, the contract's own quotient), every mode x scale granularity x ND / NZ x
key-only x padding slots x int32 / int64 slots x float16 / bfloat16 / float32 inputs."""
import ml_dtypes
import numpy as np
import pytest

from ascend_ops.reshape_and_cache import reference, reshape_and_cache

from rac_cases import SHAPES, SLOT_DTYPES, Shape
from rac_quant_cases import (GRANULARITIES, IN_DTYPES, MODES, SCALE_DTYPES, assert_codes, cache_dtype, expected,
                             make_quant, special_values)

BACKENDS = ("cpu", "emu")
# fp8 runs on cpu only (Atlas A2 / A3 have no fp8: the npu kernel, which emu runs, refuses it)
BACKEND_MODES = [(b, m) for b in BACKENDS for m in MODES if b == "cpu" or m == "int8"]
NZ_SHAPES = [Shape(7, 7, 3, 32, 64, 4, 8, padding=2), Shape(33, 33, 8, 128, 128, 3, 16, key_pad=96),
             Shape(300, 300, 1, 512, 64, 10, 32, padding=30)]


def run(backend, *args, **kwargs):
    return reshape_and_cache(*args, **kwargs, backend=backend)


@pytest.mark.parametrize("backend,mode", BACKEND_MODES)
@pytest.mark.parametrize("slot_dtype", SLOT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("in_dtype", IN_DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_nd_matches_reference(backend, shape, mode, in_dtype, slot_dtype):
    for i, granularity in enumerate(GRANULARITIES):
        key, value, kc, vc, slots, kw = make_quant(shape, in_dtype, mode, slot_dtype, seed=i, granularity=granularity,
                                                   with_offset=mode == "int8" and i % 2 == 1)
        want = expected(key, value, kc, vc, slots, **kw)
        run(backend, key, value, kc, vc, slots, **kw)
        assert_codes(kc, want[0])
        assert_codes(vc, want[1])


@pytest.mark.parametrize("backend,mode", BACKEND_MODES)
@pytest.mark.parametrize("in_dtype", IN_DTYPES)
@pytest.mark.parametrize("shape", NZ_SHAPES, ids=str)
@pytest.mark.parametrize("key_only", [False, True], ids=["kv", "key-only"])
def test_nz_matches_reference(backend, shape, mode, in_dtype, key_only):
    """NZ caches of 1-byte codes: F = 32 whatever the input dtype (float32 included)."""
    key, value, kc, vc, slots, kw = make_quant(shape, in_dtype, mode, np.int64, seed=7, granularity="channel_flat",
                                               with_offset=mode == "int8")
    kc, vc = reference.nd_to_nz(kc), reference.nd_to_nz(vc)
    assert kc.shape[-1] == 32
    if key_only:
        value = vc_before = None
        kw = {k: v for k, v in kw.items() if not k.startswith("v_")}
        want = expected(key, None, kc, None, slots, cache_mode=1, **kw)
        run(backend, key, None, kc, None, slots, cache_mode=1, **kw)
        assert vc_before is None
    else:
        want = expected(key, value, kc, vc, slots, cache_mode=1, **kw)
        run(backend, key, value, kc, vc, slots, cache_mode=1, **kw)
        assert_codes(vc, want[1])
    assert_codes(kc, want[0])


@pytest.mark.parametrize("backend,mode", BACKEND_MODES)
@pytest.mark.parametrize("granularity", GRANULARITIES)
def test_key_only_nd_every_granularity(backend, mode, granularity):
    shape = Shape(19, 13, 2, 128, 64, 5, 16, padding=3)
    key, _, kc, vc, slots, kw = make_quant(shape, "bfloat16", mode, np.int32, seed=3, granularity=granularity)
    kw = {k: v for k, v in kw.items() if not k.startswith("v_")}
    before = vc.copy()
    want = expected(key, None, kc, None, slots, **kw)
    run(backend, key, None, kc, None, slots, **kw)
    assert_codes(kc, want[0])
    assert_codes(vc, before)


@pytest.mark.parametrize("backend,mode", [(b, m) for b, m in BACKEND_MODES if m in ("int8", "fp8_e5m2")])
@pytest.mark.parametrize("scale_dtype", list(SCALE_DTYPES))
def test_scale_dtypes_and_mixed_granularity(backend, scale_dtype, mode):
    """float16 / bfloat16 scales are converted exactly to float32; k_scale and v_scale of
    different granularities (a decision: vLLM needs equal shapes, we take a superset)."""
    shape = Shape(33, 33, 8, 128, 96, 3, 16, key_pad=96, padding=4)
    key, value, kc, vc, slots, kw = make_quant(shape, "float16", mode, np.int64, seed=11, granularity="head",
                                               scale_dtype=SCALE_DTYPES[scale_dtype], with_offset=mode == "int8",
                                               k_granularity="channel2d")
    want = expected(key, value, kc, vc, slots, **kw)
    run(backend, key, value, kc, vc, slots, **kw)
    assert_codes(kc, want[0])
    assert_codes(vc, want[1])


@pytest.mark.parametrize("backend,mode", BACKEND_MODES)
@pytest.mark.parametrize("in_dtype", IN_DTYPES)
def test_special_values(backend, mode, in_dtype):
    """Ties (x.5 with scale 1: half to even), saturation (inf -> 127 / -128 or +-MAX), -0.0 (the
    fp8 negative-zero byte), fp8 subnormals, exactly as the reference (the emulator's Div is
    IEEE float32 division, so exact there too; a device may differ at the boundaries only)."""
    vals = special_values(in_dtype)
    n = vals.size
    key = np.resize(vals, (n, 1, 32))
    for t in range(n):
        key[t, 0] = np.roll(np.resize(vals, 32), t)
    cdt = cache_dtype(mode)
    kc = np.zeros((n, 1, 1, 32), cdt)
    slots = np.arange(n, dtype=np.int32)[::-1].copy()
    for scale in (np.float32(1.0), np.float32(0.25), np.float32(3.0)):
        kw = {"kv_cache_dtype": mode, "k_scale": np.array([scale], np.float32)}
        want = expected(key, None, kc, None, slots, **kw)
        run(backend, key, None, kc, None, slots, **kw)
        assert_codes(kc, want[0])
    if mode == "int8":
        assert kc.reshape(n, -1).min() == -128 and kc.reshape(n, -1).max() == 127
    else:
        assert (kc.view(np.uint8) == 0x80).any()  # -0.0 kept its sign


@pytest.mark.parametrize("backend", BACKENDS)
def test_head_num_flat_rows(backend):
    shape = Shape(19, 13, 4, 32, 64, 5, 16, padding=3)
    key, value, kc, vc, slots, kw = make_quant(shape, "float16", "int8", np.int32, seed=5, granularity="head",
                                               with_offset=True)
    want = expected(key, value, kc, vc, slots, **kw)
    run(backend, key.reshape(19, -1), value.reshape(19, -1), kc, vc, slots, head_num=4, **kw)
    assert_codes(kc, want[0])
    assert_codes(vc, want[1])


def test_reference_fp8_matches_ml_dtypes():
    """The reference's encoder (from the contract) against ml_dtypes' float32 -> fp8 casts, on
    random values over the whole range and on every midpoint of two adjacent codes."""
    rng = np.random.default_rng(0)
    for mode, fmt in (("fp8_e4m3", ml_dtypes.float8_e4m3fn), ("fp8_e5m2", ml_dtypes.float8_e5m2)):
        m, b, top = reference.FP8_FORMATS[mode]
        v = (rng.standard_normal(100000) * 10.0 ** rng.integers(-8, 6, 100000)).astype(np.float32)
        v = np.clip(v, -top, top)
        assert_codes(reference.encode_fp8(v, m, b), v.astype(fmt))
        finite = np.unique(np.arange(256, dtype=np.uint8).view(fmt).astype(np.float64))
        finite = finite[np.isfinite(finite)]
        mids = ((finite[1:] + finite[:-1]) / 2).astype(np.float32)
        assert_codes(reference.encode_fp8(mids, m, b), mids.astype(fmt))


@pytest.mark.parametrize("backend,mode", BACKEND_MODES)
def test_within_the_float64_tolerance(backend, mode):
    """The contract's tolerance: against the float64-quotient reference, every code equal or, at
    a rounding boundary, the other neighbour; the CPU's float32 quotient is one such result."""
    shape = Shape(300, 300, 2, 64, 80, 10, 32, padding=30)
    key, value, kc, vc, slots, kw = make_quant(shape, "float32", mode, np.int64, seed=9, granularity="channel2d",
                                               with_offset=mode == "int8")
    # ties of the float32 quotient: x = (k + 0.5) * s exactly for some elements
    s = kw["k_scale"].astype(np.float64)
    key[:50] = ((np.round(key[:50].astype(np.float64) / s * 4) / 4 + 0.125) * s).astype(np.float32)
    want64 = expected(key, value, kc, vc, slots, quotient="float64", **kw)
    run(backend, key, value, kc, vc, slots, **kw)
    rows = key.reshape(300, 2, 64)
    near, other = reference.boundary_alternative(rows, mode, kw["k_scale"], kw.get("k_offset"))
    written = slots >= 0
    nb, bs = kc.shape[:2]
    got_rows = kc.reshape(nb * bs, 2, 64)[slots[written]]
    want_rows = want64[0].reshape(nb * bs, 2, 64)[slots[written]]
    ok = (got_rows.view(np.uint8) == want_rows.view(np.uint8)) | \
        (near[written] & (got_rows.view(np.uint8) == other[written].view(np.uint8)))
    assert ok.all()


_ISA_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
import numpy as np
from ascend_ops.reshape_and_cache import reshape_and_cache
from rac_cases import SHAPES
from rac_quant_cases import IN_DTYPES, MODES, assert_codes, expected, make_quant
n = 0
for shape in SHAPES:
    for mode in MODES:
        for in_dtype in IN_DTYPES:
            key, value, kc, vc, slots, kw = make_quant(shape, in_dtype, mode, np.int64, seed=n, granularity="channel2d",
                                                       with_offset=mode == "int8")
            want = expected(key, value, kc, vc, slots, **kw)
            reshape_and_cache(key, value, kc, vc, slots, **kw)
            assert_codes(kc, want[0])
            assert_codes(vc, want[1])
            n += 1
print("ok", n)
"""


@pytest.mark.parametrize("isa", ["baseline", "avx2"])
def test_every_vector_build_gives_the_same_codes(isa):
    """ASCEND_OPS_CPU_ISA caps the vector build the quantising write may use: each build (not
    only this CPU's best) is checked against the reference."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = _ISA_SCRIPT.format(tests=str(Path(__file__).parent))
    done = subprocess.run([sys.executable, "-c", script], env=dict(os.environ, ASCEND_OPS_CPU_ISA=isa),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("ok")
