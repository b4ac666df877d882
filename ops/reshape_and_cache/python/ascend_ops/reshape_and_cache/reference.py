"""NumPy golden reference of reshape_and_cache, written from the specification alone.

Shares no code with the kernels. bfloat16 arrays are passed as their uint16 bit patterns
(NumPy has no bfloat16) or as ml_dtypes.bfloat16; "auto" is a bit copy, so that changes nothing.
The quantising modes (shared/specs/quantized_cache_write.md, section 1) are in
:func:`quantize`, :func:`encode_fp8` and :func:`boundary_alternative`.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

__all__ = ["reshape_and_cache", "nz_fractal", "nd_to_nz", "nz_to_nd", "as_float32", "per_channel", "quantize",
           "encode_fp8", "boundary_alternative", "FP8_FORMATS"]


def nz_fractal(dtype) -> int:
    """F, the width of a FRACTAL_NZ fractal row: 32 bytes of elements (16 for float16 /
    bfloat16, 32 for int8)."""
    return 32 // np.dtype(dtype).itemsize


def nd_to_nz(cache: np.ndarray) -> np.ndarray:
    """An ND cache [num_blocks, block_size, H, D] as the NZ cache [num_blocks, H*D/F, block_size, F]
    holding the same values: nz[b, j // F, o, j % F] = nd[b, o].reshape(-1)[j]."""
    nb, bs = cache.shape[:2]
    f = nz_fractal(cache.dtype)
    return np.ascontiguousarray(cache.reshape(nb, bs, -1, f).transpose(0, 2, 1, 3))


def nz_to_nd(cache: np.ndarray, heads: int) -> np.ndarray:
    """The inverse of :func:`nd_to_nz`: [num_blocks, H*D/F, block_size, F] -> [num_blocks, block_size, H, D]."""
    nb, _, bs, _ = cache.shape
    return np.ascontiguousarray(cache.transpose(0, 2, 1, 3)).reshape(nb, bs, heads, -1)


def reshape_and_cache(
    key: np.ndarray,                    # [T, H, Dk] or [T, H*Dk] with head_num
    value: Optional[np.ndarray],        # [T, H, Dv] / [T, H*Dv], or None (key-only)
    key_cache: np.ndarray,              # ND [num_blocks, block_size, H, Dk] / NZ [num_blocks, H*Dk/F, block_size, F]
    value_cache: Optional[np.ndarray],  # the same with Dv, or None
    slot_mapping: np.ndarray,           # [T'], T' <= T
    cache_mode: int = 0,
    head_num: Optional[int] = None,
    kv_cache_dtype: str = "auto",
    k_scale=None,
    v_scale=None,
    k_offset=None,
    v_offset=None,
    quotient: str = "float32",
) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """Return (key_cache, value_cache) after the write, as new arrays (value_cache None when
    key-only).

    For every t < T' with s = slot_mapping[t] >= 0, block b = s // block_size, offset
    o = s % block_size, row = key[t] flattened to its H*Dk elements:
      cache_mode 0 (ND): key_cache[b, o] = key[t];
      cache_mode 1 (NZ): key_cache[b, j // F, o, j % F] = row[j] for every j < H*Dk,
      F = 32 bytes / itemsize;
      cache_mode 2 (head-major ND [num_blocks, H, block_size, Dk]): key_cache[b, h, o] = key[t, h];
      cache_mode 3 (vLLM paged): key_cache[b, h, d // x, o, d % x] = key[t, h, d] (key_cache
      [num_blocks, H, Dk/x, block_size, x], x = 16 bytes / itemsize), value_cache[b, h, d, o] =
      value[t, h, d] (value_cache [num_blocks, H, Dv, block_size]). The same for value.
    Any cache may be a strided view: the values are what counts. s < 0 writes nothing (padding).
    Raises IndexError for s >= num_blocks * block_size. Duplicate slots: the last token wins
    here; the op itself does not promise which one. head_num only reshapes a [T, H*D] input.

    A quantising kv_cache_dtype writes the codes of :func:`quantize` instead (key with k_scale /
    k_offset, value with v_scale / v_offset; a [T, H*D] input needs head_num for per-head
    scales); `quotient` as there.
    """
    outs = []
    for src, cache, scale, shift in ((key, key_cache, k_scale, k_offset), (value, value_cache, v_scale, v_offset)):
        if src is None:
            outs.append(None)
            continue
        if kv_cache_dtype != "auto":
            src = np.asarray(src)
            heads = src.shape[1] if src.ndim == 3 else head_num
            rows = src.reshape(src.shape[0], heads, int(np.prod(src.shape[1:], dtype=np.int64)) // heads)
            src = quantize(rows, kv_cache_dtype, scale, shift, quotient=quotient).view(cache.dtype)
        out = cache.copy()
        num_blocks = cache.shape[0]
        block_size = {1: cache.shape[2], 2: cache.shape[2], 3: cache.shape[3]}.get(cache_mode, cache.shape[1])
        num_slots = num_blocks * block_size
        src = np.asarray(src)
        rows = src.reshape(src.shape[0], int(np.prod(src.shape[1:], dtype=np.int64)))
        for t, slot in enumerate(np.asarray(slot_mapping).tolist()):
            if slot < 0:
                continue
            if slot >= num_slots:
                raise IndexError(f"slot_mapping[{t}] = {slot} is out of range ({num_slots} slots)")
            block, offset = divmod(slot, block_size)
            if cache_mode == 1:
                # out[block, j // F, offset, j % F] = rows[t][j] for every j
                out[block, :, offset, :] = rows[t].reshape(-1, cache.shape[3])
            elif cache_mode == 2:
                # head-major: out[block, h, offset, d] = row[h, d]
                out[block, :, offset, :] = rows[t].reshape(cache.shape[1], cache.shape[3])
            elif cache_mode == 3 and cache.ndim == 5:
                # vLLM paged key: out[block, h, d // x, offset, d % x] = row[h, d]
                out[block, :, :, offset, :] = rows[t].reshape(cache.shape[1], cache.shape[2], cache.shape[4])
            elif cache_mode == 3:
                # vLLM paged value: out[block, h, d, offset] = row[h, d]
                out[block, :, :, offset] = rows[t].reshape(cache.shape[1], cache.shape[2])
            else:
                out[block, offset] = rows[t].reshape(cache.shape[2:])
        outs.append(out)
    return outs[0], outs[1]


# ---- the quantising modes ----

# name -> (mantissa bits M, exponent bias B, largest finite value MAX) of the OCP 8-bit formats.
FP8_FORMATS = {"fp8": (3, 7, 448.0), "fp8_e4m3": (3, 7, 448.0), "fp8_e5m2": (2, 15, 57344.0)}


def as_float32(x) -> np.ndarray:
    """float16 / float32 / ml_dtypes.bfloat16 values, or bfloat16 as uint16 bit patterns, as
    float32 (exact)."""
    x = np.asarray(x)
    if x.dtype == np.uint16:
        return (x.astype(np.uint32) << 16).view(np.float32)
    return x.astype(np.float32)


def per_channel(param, heads: int, head_size: int) -> np.ndarray:
    """A scale or offset of shape [], [1] (per tensor), [H] (per head), [H, D] or [H*D] (per
    channel) as float32 [H, D]: element (h, d) is s, s[h] or s[h*D + d]."""
    p = as_float32(param).reshape(-1)
    if p.size == 1:
        return np.full((heads, head_size), p[0], np.float32)
    if p.size == heads * head_size:
        return p.reshape(heads, head_size)
    if p.size == heads:
        return np.repeat(p[:, None], head_size, axis=1)
    raise ValueError(f"a scale of {p.size} elements for H = {heads}, D = {head_size}")


def quantize(rows: np.ndarray, kv_cache_dtype: str, scale, offset=None, quotient: str = "float32") -> np.ndarray:
    """The cache codes of rows [T, H, D] (uint8 for fp8, int8 for int8), from the contract:

        y = x / s(h, d)                      quotient "float32": fl32, IEEE division
                                             quotient "float64": in float64 (the tolerance's reference)
        int8: y = y + o(h, d) (fl32 again with "float32"); clamp(round_half_even(y), -128, 127)
        fp8:  encode_fp8(clamp(y, -MAX, MAX))

    x is float32(key) exactly. float64 division (then rounding to float32) is the correctly
    rounded float32 quotient, as is the float64 sum of two float32 values rounded to float32.
    """
    x = as_float32(rows).astype(np.float64)
    heads, head_size = x.shape[1], x.shape[2]
    y = x / per_channel(scale, heads, head_size).astype(np.float64)
    if quotient == "float32":
        y = y.astype(np.float32).astype(np.float64)
    if kv_cache_dtype == "int8":
        if offset is not None:
            y = y + per_channel(offset, heads, head_size).astype(np.float64)
            if quotient == "float32":
                y = y.astype(np.float32).astype(np.float64)
        return np.clip(np.rint(y), -128, 127).astype(np.int8)  # rint: half to even
    m, b, top = FP8_FORMATS[kv_cache_dtype]
    return encode_fp8(np.clip(y, -top, top), m, b)


def encode_fp8(y: np.ndarray, mantissa_bits: int, bias: int) -> np.ndarray:
    """uint8 codes of finite values already within +-MAX, rounded to nearest even: sign bit 7,
    then exponent and mantissa; subnormals (|y| < 2^(1 - bias)) in steps of 2^(1 - bias - M);
    -0.0 (and a negative value rounding to zero) gives the negative-zero byte 0x80."""
    y = np.asarray(y, np.float64)
    sign = np.signbit(y).astype(np.uint8) << 7
    a = np.abs(y)
    m_scale = 2.0 ** mantissa_bits
    min_normal = 2.0 ** (1 - bias)
    sub = a < min_normal
    code = np.zeros(a.shape, np.int64)
    code[sub] = np.rint(a[sub] / (min_normal / m_scale)).astype(np.int64)  # 2^M is the smallest normal's code
    mant, exp = np.frexp(a[~sub])  # a = mant * 2^exp, mant in [0.5, 1)
    e = exp - 1                    # a = (1 + f) * 2^e
    f = mant * 2.0 - 1.0
    q = np.rint(f * m_scale).astype(np.int64)
    carry = q == int(m_scale)
    e = e + carry
    q = np.where(carry, 0, q)
    code[~sub] = ((e + bias) << mantissa_bits) | q
    return (code.astype(np.uint8) | sign).astype(np.uint8)


def boundary_alternative(rows: np.ndarray, kv_cache_dtype: str, scale, offset=None) -> tuple[np.ndarray, np.ndarray]:
    """The contract's tolerance: (near, other). The exact value y = x / s (+ o) lies within
    2^-22 * max(1, |y|) of a rounding boundary (a half-integer for int8, the midpoint of two
    adjacent fp8 values) where `near` is True; there `other` is the code of the boundary's other
    side, which a kernel may return instead of the reference's code (a reciprocal multiply or an
    FMA on the NPU)."""
    x = as_float32(rows).astype(np.float64)
    heads, head_size = x.shape[1], x.shape[2]
    y = x / per_channel(scale, heads, head_size).astype(np.float64)
    if kv_cache_dtype == "int8" and offset is not None:
        y = y + per_channel(offset, heads, head_size).astype(np.float64)
    slack = 2.0 ** -22 * np.maximum(1.0, np.abs(y))
    lo = quantize_value(y - slack, kv_cache_dtype)
    hi = quantize_value(y + slack, kv_cache_dtype)
    mid = quantize_value(y, kv_cache_dtype)
    near = (lo != hi) & (np.signbit(y - slack) == np.signbit(y + slack))  # 0 is no boundary: +-0 only
    other = np.where(lo == mid, hi, lo)
    return near, other


def quantize_value(y: np.ndarray, kv_cache_dtype: str) -> np.ndarray:
    """Codes of exact values y (float64), as :func:`quantize` after its division (and offset)."""
    if kv_cache_dtype == "int8":
        return np.clip(np.rint(y), -128, 127).astype(np.int8)
    m, b, top = FP8_FORMATS[kv_cache_dtype]
    return encode_fp8(np.clip(y, -top, top), m, b)
