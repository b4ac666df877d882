"""Case makers of the quantising-mode tests (kv_cache_dtype != "auto"): inputs, caches of the
mode's dtype, scales / offsets of each granularity, and the comparison with the reference."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from ascend_ops.reshape_and_cache import reference

from rac_cases import Shape, make

MODES = ("int8", "fp8", "fp8_e4m3", "fp8_e5m2")
IN_DTYPES = ("float16", "bfloat16", "float32")
GRANULARITIES = ("tensor0d", "tensor1", "head", "channel2d", "channel_flat")
SCALE_DTYPES = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def cache_dtype(mode: str):
    return np.int8 if mode == "int8" else np.uint8


def scale_array(rng, granularity: str, heads: int, head_size: int, mode: str, dtype=np.float32, offset=False):
    """A scale (offset=False: positive, spread so codes cover the whole range and saturate) or
    an int8 offset (small, either sign) of the given granularity."""
    shape = {"tensor0d": (), "tensor1": (1,), "head": (heads,), "channel2d": (heads, head_size),
             "channel_flat": (heads * head_size,)}[granularity]
    if offset:
        values = rng.uniform(-20, 20, shape)
    else:
        top = {"int8": 127.0, "fp8_e5m2": 57344.0}.get(mode, 448.0)
        values = 2.5 / top * np.exp(rng.uniform(-2.0, 2.0, shape))  # |x| ~ 2.5 lands near the top of the range
    return np.asarray(values).astype(dtype)


def make_quant(shape: Shape, in_dtype: str, mode: str, slot_dtype, seed: int, granularity: str,
               scale_dtype=np.float32, with_offset=False, k_granularity=None):
    """key, value, key_cache, value_cache, slots (bfloat16 inputs as ml_dtypes.bfloat16), and
    the keyword arguments of the call."""
    key, value, _, _, slots = make(shape, in_dtype, slot_dtype, seed)
    if in_dtype == "bfloat16":
        key = key.view(ml_dtypes.bfloat16)
        value = value.view(ml_dtypes.bfloat16)
    rng = np.random.default_rng(seed + 1000)
    cdt = cache_dtype(mode)
    info = np.iinfo(cdt)
    key_cache = rng.integers(info.min, info.max + 1, (shape.num_blocks, shape.block_size, shape.heads, shape.dk),
                             dtype=cdt)
    value_cache = rng.integers(info.min, info.max + 1, (shape.num_blocks, shape.block_size, shape.heads, shape.dv),
                               dtype=cdt)
    kg = k_granularity or granularity
    kwargs = {"kv_cache_dtype": mode,
              "k_scale": scale_array(rng, kg, shape.heads, shape.dk, mode, scale_dtype),
              "v_scale": scale_array(rng, granularity, shape.heads, shape.dv, mode, scale_dtype)}
    if with_offset:
        kwargs["k_offset"] = scale_array(rng, kg, shape.heads, shape.dk, mode, scale_dtype, offset=True)
        kwargs["v_offset"] = scale_array(rng, granularity, shape.heads, shape.dv, mode, scale_dtype, offset=True)
    return key, value, key_cache, value_cache, slots, kwargs


def special_values(dtype: str) -> np.ndarray:
    """Inputs that exercise the edges: zeros of both signs, infinities, the largest finite
    value, values that divide to exact ties (x.5 for scale 1), tiny values (fp8 subnormals)."""
    vals = [0.0, -0.0, np.inf, -np.inf, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 126.5, 127.5, -127.5, -128.5, 448.0,
            464.0, -480.0, 2.0**-9, 2.0**-10, 3 * 2.0**-11, -(2.0**-10), 2.0**-16, 2.0**-17, 60000.0, -61440.0,
            1e-30]
    if dtype == "float16":
        vals = [v for v in vals if not (np.isfinite(v) and abs(v) > 65504)]
    out = np.asarray(vals, np.float64)
    return out.astype({"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32}[dtype])


def assert_codes(got: np.ndarray, want: np.ndarray):
    np.testing.assert_array_equal(np.ascontiguousarray(got).view(np.uint8), np.ascontiguousarray(want).view(np.uint8))


def expected(key, value, key_cache, value_cache, slots, cache_mode=0, head_num=None, quotient="float32", **kwargs):
    return reference.reshape_and_cache(key, value, key_cache, value_cache, slots, cache_mode=cache_mode,
                                       head_num=head_num, quotient=quotient, **kwargs)
