"""End to end: quantise into the split int8 cache (cpu and emu), dequantise (x̂ = q * stored scale)
and compare with k within the contract's error: |x̂ - x| <= sc / 2 (the int8 rounding) plus the
stored scale's rounding (float16: relative 2^-11 of |q| * sc <= 127 sc) plus the float32 division's
half ulp; the fused fp8 cache (cpu) within E4M3FN's half-ulp relative error (2^-4) or, below its
normal range, half the subnormal step."""
import numpy as np
import pytest

from ascend_ops.indexer_k_quant_and_cache import indexer_k_quant_and_cache, reference

from ikq_cases import Case, make


@pytest.mark.parametrize("backend", ["cpu", "emu"])
@pytest.mark.parametrize("scale_dtype", ["float16", "float32"])
@pytest.mark.parametrize("k_dtype", ["float16", "bfloat16", "float32"])
def test_split_dequantises_to_k(backend, scale_dtype, k_dtype):
    case = Case(64, 60, 128, 64, 8, 16, scale_dtype=scale_dtype, padding=6, zero_rows=2)
    k, cache, slots, scales, kwargs = make(case, k_dtype, np.int64, seed=11)
    indexer_k_quant_and_cache(k, cache, slots, k_scale_cache=scales, backend=backend,
                              dtype="bfloat16" if k_dtype == "bfloat16" else None, **kwargs)
    keep = np.nonzero(slots >= 0)[0]
    x = reference._as_float32(k)[keep].astype(np.float64)
    got = reference.dequantize_split(cache, scales, slots[keep]).astype(np.float64)
    amax = np.abs(x.reshape(len(keep), 2, 64)).max(axis=2)
    sc = np.repeat(np.where(amax == 0, 1.0, amax / 127), 64, axis=1)
    stored_rel = 2.0 ** -11 if scale_dtype == "float16" else 2.0 ** -24
    bound = sc * (0.5 + 2.0 ** -23) + 128 * sc * stored_rel
    assert np.all(np.abs(got - x) <= bound)


@pytest.mark.parametrize("scale_fmt", [None, "ue8m0"])
def test_fused_dequantises_to_k(scale_fmt):
    case = Case(40, 40, 128, 128, 4, 16, layout="fused", scale_fmt=scale_fmt, zero_rows=2)
    k, cache, slots, _, kwargs = make(case, "float32", np.int32, seed=12)
    indexer_k_quant_and_cache(k, cache, slots, backend="cpu", **kwargs)
    got = reference.dequantize_fused(cache, slots, 128, 128).astype(np.float64)
    x = k[: len(slots)].astype(np.float64)
    sc = np.array([reference.group_scales(k[t:t + 1], 128, True, scale_fmt)[0, 0] for t in range(len(slots))])
    bound = np.maximum(np.abs(x) * 2.0 ** -4, sc[:, None] * 2.0 ** -10) * (1 + 2.0 ** -20)
    assert np.all(np.abs(got - x) <= bound)
