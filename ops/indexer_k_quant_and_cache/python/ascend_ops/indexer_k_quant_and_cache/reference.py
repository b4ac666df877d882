"""NumPy golden reference of indexer_k_quant_and_cache, written from the specification alone
(shared/specs/quantized_cache_write.md section 2). Shares no code with the kernels: the E4M3FN
encode searches the table of every E4M3FN value (the kernels round float32 bits), ue8m0 uses
frexp (the kernels the exponent bits).

bfloat16 k: an ``ml_dtypes.bfloat16`` array, or its uint16 bit patterns.
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

__all__ = ["E4M3FN_MAX", "e4m3fn_values", "encode_e4m3fn", "decode_e4m3fn", "ue8m0", "group_scales",
           "indexer_k_quant_and_cache", "dequantize_split", "dequantize_fused"]

E4M3FN_MAX = 448.0


def e4m3fn_values() -> np.ndarray:
    """float64 value of every non-negative E4M3FN code 0x00..0x7E (0x7F is NaN): exponent bias 7,
    3 mantissa bits, subnormals m/8 * 2^-6."""
    codes = np.arange(0x7F)
    e, m = codes >> 3, codes & 7
    return np.where(e == 0, m / 8.0 * 2.0 ** -6, (1 + m / 8.0) * 2.0 ** (e - 7.0))


def encode_e4m3fn(y: np.ndarray) -> np.ndarray:
    """uint8 E4M3FN codes of clamp(y, -448, 448), round to nearest, ties to the even code;
    -0.0 -> 0x80. y: float32 (not NaN)."""
    y = np.asarray(y, dtype=np.float32)
    values = e4m3fn_values()
    a = np.minimum(np.abs(y).astype(np.float64), E4M3FN_MAX)
    hi = np.clip(np.searchsorted(values, a, side="left"), 0, len(values) - 1)  # values[hi] >= a
    lo = np.maximum(hi - 1, 0)
    d_lo, d_hi = a - values[lo], values[hi] - a
    pick_hi = (d_hi < d_lo) | ((d_hi == d_lo) & (hi % 2 == 0))
    code = np.where(pick_hi, hi, lo).astype(np.uint8)
    return code | np.where(np.signbit(y), np.uint8(0x80), np.uint8(0))


def decode_e4m3fn(codes: np.ndarray) -> np.ndarray:
    """float32 values of E4M3FN codes (0x7F / 0xFF NaN)."""
    c = np.asarray(codes, dtype=np.uint8)
    mag = c & 0x7F
    v = np.append(e4m3fn_values(), np.nan)[mag]
    return np.where(c & 0x80, -v, v).astype(np.float32)


def ue8m0(sc: np.ndarray) -> np.ndarray:
    """2^ceil(log2(sc)) exactly, for positive float32 sc: frexp gives sc = m * 2^e, m in [0.5, 1)."""
    m, e = np.frexp(np.asarray(sc, dtype=np.float32).astype(np.float64))
    return np.ldexp(1.0, np.where(m == 0.5, e - 1, e)).astype(np.float32)


def _as_float32(k: np.ndarray) -> np.ndarray:
    k = np.asarray(k)
    if k.dtype == np.uint16:  # bfloat16 bit patterns
        return (k.astype(np.uint32) << 16).view(np.float32)
    return k.astype(np.float32)


def group_scales(x: np.ndarray, qbs: int, fused: bool, scale_fmt: Optional[str] = None) -> np.ndarray:
    """float32 scales [T, G] of float32 rows x [T, D]."""
    t, d = x.shape
    amax = np.abs(x.reshape(t, d // qbs, qbs)).max(axis=2)
    if fused:
        sc = (np.maximum(amax, np.float32(1e-4)) / np.float32(448.0)).astype(np.float32)
        return ue8m0(sc) if scale_fmt == "ue8m0" else sc
    return np.where(amax == 0, np.float32(1.0), amax / np.float32(127.0)).astype(np.float32)


def indexer_k_quant_and_cache(
    k: np.ndarray,                        # [T, D]
    k_cache: np.ndarray,                  # fused uint8 [nb, bs, D + 4G] | split int8 [nb, bs, (1,) D]
    slot_mapping: np.ndarray,             # [T'], T' <= T
    k_scale_cache: Optional[np.ndarray] = None,  # split: float16 / float32 [nb, bs, (1,) G]
    quant_block_size: int = 128,
    scale_fmt: Optional[str] = None,
) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """Return (k_cache, k_scale_cache) after the write, as new contiguous arrays (k_scale_cache
    None when fused). Raises IndexError for a slot >= num_blocks * block_size and ValueError for a
    float16 scale that overflows, before writing."""
    x_all = _as_float32(k)
    qbs = int(quant_block_size)
    t_all, d = x_all.shape
    g = d // qbs
    fused = k_cache.dtype == np.uint8
    slots = np.asarray(slot_mapping).astype(np.int64)
    nb, bs = k_cache.shape[:2]
    if np.any(slots >= nb * bs):
        t = int(np.argmax(slots >= nb * bs))
        raise IndexError(f"slot_mapping[{t}] = {slots[t]} is out of range ({nb * bs} slots)")
    keep = np.nonzero(slots >= 0)[0]
    x = x_all[keep]
    sc = group_scales(x, qbs, fused, scale_fmt)                       # [n, G] float32
    with np.errstate(divide="ignore", invalid="ignore"):
        y = (x.reshape(len(keep), g, qbs) / sc[:, :, None]).astype(np.float32).reshape(len(keep), d)
    cache = np.ascontiguousarray(k_cache).copy()
    if fused:
        codes = encode_e4m3fn(np.clip(y, -E4M3FN_MAX, E4M3FN_MAX))
        flat = cache.reshape(nb, -1)                                   # one block's bytes
        for n, t in enumerate(keep):
            b, o = divmod(int(slots[t]), bs)
            flat[b, o * d:(o + 1) * d] = codes[n]
            at = bs * d + 4 * o * g
            flat[b, at:at + 4 * g] = sc[n].astype("<f4").view(np.uint8)
        return cache, None
    codes = np.clip(np.rint(y), -128, 127).astype(np.int8)
    scales = np.ascontiguousarray(k_scale_cache).copy()
    stored = sc.astype(scales.dtype)                                   # float16: nearest even
    if scales.dtype == np.float16 and np.any(np.isinf(stored)):
        n = int(np.argmax(np.isinf(stored).any(axis=1)))
        raise ValueError(f"the float16 scale of k[{keep[n]}] overflows")
    c2, s2 = cache.reshape(nb, bs, d), scales.reshape(nb, bs, g)
    for n, t in enumerate(keep):
        b, o = divmod(int(slots[t]), bs)
        c2[b, o] = codes[n]
        s2[b, o] = stored[n]
    return cache, scales


def dequantize_split(k_cache: np.ndarray, k_scale_cache: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """float32 rows [n, D] dequantised from the split cache at `slots` (all >= 0):
    x̂_d = q_d * stored_sc_g."""
    nb, bs = k_cache.shape[:2]
    codes = np.asarray(k_cache).reshape(nb * bs, -1)[slots].astype(np.float32)
    sc = np.asarray(k_scale_cache).reshape(nb * bs, -1)[slots].astype(np.float32)
    g = sc.shape[1]
    return (codes.reshape(len(slots), g, -1) * sc[:, :, None]).reshape(len(slots), -1)


def dequantize_fused(k_cache: np.ndarray, slots: np.ndarray, head_dim: int, quant_block_size: int) -> np.ndarray:
    """float32 rows [n, D] dequantised from the fused cache at `slots`: decode(q_d) * sc_g."""
    nb, bs = k_cache.shape[:2]
    d, g = head_dim, head_dim // quant_block_size
    flat = np.ascontiguousarray(k_cache).reshape(nb, -1)
    out = []
    for s in np.asarray(slots).tolist():
        b, o = divmod(s, bs)
        q = decode_e4m3fn(flat[b, o * d:(o + 1) * d])
        sc = flat[b, bs * d + 4 * o * g: bs * d + 4 * (o + 1) * g].view("<f4")
        out.append((q.reshape(g, -1) * sc[:, None]).reshape(-1))
    return np.array(out, dtype=np.float32).reshape(len(out), d)
