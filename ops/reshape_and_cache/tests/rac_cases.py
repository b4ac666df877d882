"""Shared case makers of the reshape_and_cache tests (NumPy side)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_ops.devkit.testing import random_array

DTYPES = ("float16", "bfloat16", "float32", "int8")
SLOT_DTYPES = (np.int32, np.int64)


@dataclass(frozen=True)
class Shape:
    tokens: int        # T
    written: int       # T' <= T
    heads: int         # H
    dk: int
    dv: int
    num_blocks: int
    block_size: int
    key_pad: int = 0   # extra elements between token rows of key (a fused-qkv view)
    padding: int = 0   # how many of the T' slots are -1

    def __str__(self) -> str:
        return (f"T{self.tokens}/{self.written}-H{self.heads}-Dk{self.dk}-Dv{self.dv}-"
                f"{self.num_blocks}x{self.block_size}-pad{self.key_pad}-neg{self.padding}")


# Odd sizes, Dk != Dv, head sizes that are and are not multiples of 16 elements, T' < T,
# strided key rows, padding slots, a single token, many tokens.
SHAPES = [
    Shape(1, 1, 1, 16, 16, 1, 16),
    Shape(7, 7, 3, 20, 12, 4, 8, padding=2),
    Shape(19, 13, 2, 128, 64, 5, 16, padding=3),
    Shape(33, 33, 8, 128, 128, 3, 16, key_pad=96),
    Shape(64, 50, 4, 9, 5, 16, 4, key_pad=7, padding=5),
    Shape(300, 300, 2, 64, 80, 10, 32, padding=30),
    Shape(5, 0, 2, 16, 16, 2, 4),
]


def strided(array: np.ndarray, pad: int) -> np.ndarray:
    """`array` [T, H, D] as a view whose token rows are H*D + pad elements apart (like a
    slice of a fused qkv tensor); the padding holds garbage a kernel must not copy."""
    if pad == 0:
        return array
    t, h, d = array.shape
    fused = np.full((t, h * d + pad), 0x55, dtype=array.dtype) if array.dtype.kind in "iu" else \
        np.full((t, h * d + pad), np.nan, dtype=array.dtype)
    view = fused[:, pad // 2: pad // 2 + h * d].reshape(t, h, d)
    view[...] = array
    return view


def make(shape: Shape, dtype: str, slot_dtype, seed: int = 0):
    """key, value, key_cache, value_cache, slot_mapping (bfloat16 as uint16 bits)."""
    rng = np.random.default_rng(seed)
    s = shape
    key = strided(random_array((s.tokens, s.heads, s.dk), dtype, rng), s.key_pad)
    value = random_array((s.tokens, s.heads, s.dv), dtype, rng)
    key_cache = random_array((s.num_blocks, s.block_size, s.heads, s.dk), dtype, rng)
    value_cache = random_array((s.num_blocks, s.block_size, s.heads, s.dv), dtype, rng)
    slots = rng.permutation(s.num_blocks * s.block_size)[: s.written].astype(slot_dtype)
    if s.padding:
        slots[rng.choice(s.written, size=s.padding, replace=False)] = -1
    return key, value, key_cache, value_cache, slots
