"""bfloat16 bit helpers and random cases."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascend_ops.devkit.testing import (
    bf16_round,
    from_bf16_bits,
    to_bf16,
    make_rng,
    random_array,
    strided_rows,
    to_bf16_bits,
)

HAS_TORCH = importlib.util.find_spec("torch") is not None


# --- bfloat16 ------------------------------------------------------------------------------
@pytest.mark.parametrize("value, bits", [
    (1.0, 0x3F80),
    (-2.0, 0xC000),
    (3.140625, 0x4049),              # exactly representable
    (0.0, 0x0000),
    (-0.0, 0x8000),
    (np.inf, 0x7F80),
    (-np.inf, 0xFF80),
    (1.0 + 2**-8, 0x3F80),           # tie between 0x3F80 (even) and 0x3F81: down
    (1.0 + 3 * 2**-8, 0x3F82),       # tie between 0x3F81 and 0x3F82 (even): up
    (1.0 + 2**-8 + 2**-20, 0x3F81),  # above the tie: up
    (3.4028234663852886e38, 0x7F80),  # float32 max rounds past the bfloat16 max to inf
    (3.3895313892515355e38, 0x7F7F),  # the bfloat16 max
    (1e-45, 0x0000),                 # the smallest float32 subnormal rounds to zero
])
def test_to_bf16_bits_rounds_to_nearest_even(value, bits):
    out = to_bf16_bits(np.array([value], dtype=np.float32))
    assert out.dtype == np.uint16 and int(out[0]) == bits, hex(int(out[0]))


def test_nan_stays_nan_with_its_sign():
    payload_in_low_bits = np.array([0x7F800001, 0xFF800001], dtype=np.uint32).view(np.float32)
    out = to_bf16_bits(payload_in_low_bits)
    assert [hex(b) for b in out] == ["0x7fc0", "0xffc0"]
    assert np.isnan(from_bf16_bits(out)).all()
    assert int(to_bf16_bits(np.float32(np.nan))) & 0x7FC0 == 0x7FC0


def test_from_bf16_bits():
    bits = np.array([[0x3F80, 0x4049], [0xC000, 0x0001]], dtype=np.uint16)
    values = from_bf16_bits(bits)
    assert values.dtype == np.float32 and values.shape == (2, 2)
    assert values[0, 0] == 1.0 and values[0, 1] == 3.140625 and values[1, 0] == -2.0
    assert values[1, 1] == np.float32(2.0**-133)   # a bfloat16 subnormal
    signed = from_bf16_bits(np.array([-16384], dtype=np.int16))   # 0xC000 viewed as int16
    assert signed[0] == -2.0
    with pytest.raises(TypeError, match="uint16"):
        from_bf16_bits(np.array([1.0]))


def test_every_bfloat16_round_trips_exactly():
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    back = to_bf16_bits(from_bf16_bits(bits))
    nan = np.isnan(from_bf16_bits(bits))
    assert np.array_equal(back[~nan], bits[~nan])
    assert np.isnan(from_bf16_bits(back[nan])).all()


@settings(max_examples=300, deadline=None)
@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_bf16_round_is_nearest(x):
    rounded = float(bf16_round(np.float32(x)))
    if np.isinf(rounded) and not np.isinf(x):
        assert abs(x) >= 3.3895313892515355e38
        return
    bits = int(to_bf16_bits(np.float32(x)))
    neighbours = [float(from_bf16_bits(np.uint16(b))) for b in (bits - 1, bits + 1) if 0 <= b < 0xFFFF]
    for n in neighbours:
        if np.isfinite(n) and np.sign(n) == np.sign(rounded):
            assert abs(rounded - x) <= abs(n - x)


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
def test_bf16_matches_torch():
    import torch

    rng = make_rng(7)
    values = np.concatenate([
        rng.standard_normal(20000).astype(np.float32),
        # exact ties: float32 whose low 16 bits are 0x8000
        (rng.integers(0x3000, 0x5000, 2000, dtype=np.uint32) << 16 | 0x8000).view(np.float32),
    ])
    ours = to_bf16_bits(values)
    theirs = torch.from_numpy(values).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    assert np.array_equal(ours, theirs)


# --- random cases --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype, np_dtype", [
    ("float16", np.float16), ("bfloat16", np.uint16), ("float32", np.float32),
    ("int8", np.int8), ("int32", np.int32), ("int64", np.int64),
])
def test_random_array(dtype, np_dtype):
    a = random_array((7, 19), dtype, make_rng(3))
    b = random_array((7, 19), dtype, make_rng(3))
    assert a.dtype == np_dtype and a.shape == (7, 19) and a.flags.c_contiguous
    assert np.array_equal(a, b), "same seed, same data"
    assert not np.array_equal(a, random_array((7, 19), dtype, make_rng(4)))


def test_random_array_ranges():
    idx = random_array(1000, "int32", make_rng(0), low=-1, high=10)
    assert idx.min() == -1 and idx.max() == 9
    full = random_array(5000, "int8", make_rng(0))
    assert full.min() < -100 and full.max() > 100
    u = random_array(1000, "float32", make_rng(0), low=2.0, high=3.0)
    assert 2.0 <= u.min() and u.max() < 3.0
    bf = from_bf16_bits(random_array(1000, "bfloat16", make_rng(0), low=-1.0, high=1.0))
    assert -1.0 <= bf.min() and bf.max() <= 1.0
    with pytest.raises(ValueError, match="both low and high"):
        random_array(3, "float16", make_rng(0), low=1.0)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "int32"])
def test_strided_rows(dtype):
    a = random_array((5, 3, 11), dtype, make_rng(1))
    s = strided_rows(a, pad=5)
    assert np.array_equal(s, a) and s.dtype == a.dtype
    assert s.strides[-2] == (11 + 5) * a.itemsize > 11 * a.itemsize
    assert s.strides[-1] == a.itemsize and not s.flags.c_contiguous
    padding = s.base.reshape(5, 3, 16)[..., 11:]
    if a.dtype.kind == "f":
        assert np.isnan(padding).all()
    else:
        assert (padding == np.iinfo(a.dtype).max).all()


def test_strided_rows_rejects():
    with pytest.raises(ValueError, match="2-D"):
        strided_rows(np.zeros(4), 1)
    with pytest.raises(ValueError, match="pad"):
        strided_rows(np.zeros((2, 2)), 0)


def test_to_bf16_is_the_ml_dtypes_array_of_the_bits():
    import ml_dtypes

    x = np.array([1.0, -2.5, 1.0 + 2**-8, 3.4028234663852886e38, np.nan], dtype=np.float32)
    a = to_bf16(x)
    assert a.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(a.view(np.uint16), to_bf16_bits(x))
