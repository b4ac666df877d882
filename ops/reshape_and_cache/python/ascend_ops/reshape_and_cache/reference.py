"""NumPy golden reference of reshape_and_cache, written from the specification alone.

Shares no code with the kernels. bfloat16 arrays are passed as their uint16 bit patterns
(NumPy has no bfloat16); the op is a bit copy, so that changes nothing.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

__all__ = ["reshape_and_cache", "nz_fractal", "nd_to_nz", "nz_to_nd"]


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
) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """Return (key_cache, value_cache) after the write, as new arrays (value_cache None when
    key-only).

    For every t < T' with s = slot_mapping[t] >= 0, block b = s // block_size, offset
    o = s % block_size, row = key[t] flattened to its H*Dk elements:
      cache_mode 0 (ND): key_cache[b, o] = key[t];
      cache_mode 1 (NZ): key_cache[b, j // F, o, j % F] = row[j] for every j < H*Dk,
      F = 32 bytes / itemsize. The same for value. s < 0 writes nothing (padding).
    Raises IndexError for s >= num_blocks * block_size. Duplicate slots: the last token wins
    here; the op itself does not promise which one. head_num only reshapes a [T, H*D] input.
    """
    del head_num  # the write is the same bytes whatever the head split
    outs = []
    for src, cache in ((key, key_cache), (value, value_cache)):
        if src is None:
            outs.append(None)
            continue
        out = cache.copy()
        num_blocks = cache.shape[0]
        block_size = cache.shape[2] if cache_mode == 1 else cache.shape[1]
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
            else:
                out[block, offset] = rows[t].reshape(cache.shape[2:])
        outs.append(out)
    return outs[0], outs[1]
