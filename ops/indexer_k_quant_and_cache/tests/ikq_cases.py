"""Shared case makers of the indexer_k_quant_and_cache tests (NumPy side)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ascend_ops.devkit.testing import random_array, to_bf16_bits

K_DTYPES = ("float16", "bfloat16", "float32")
SLOT_DTYPES = (np.int32, np.int64)


@dataclass(frozen=True)
class Case:
    tokens: int           # T
    written: int          # T' <= T
    head_dim: int         # D
    qbs: int              # quant_block_size
    num_blocks: int
    block_size: int
    layout: str = "split"          # "split" or "fused"
    scale_dtype: str = "float16"   # split: the scale cache's dtype
    rank4: bool = True             # split: [nb, bs, 1, D] (else [nb, bs, D])
    k_pad: int = 0                 # extra elements between k's rows (a strided view)
    padding: int = 0               # how many of the T' slots are -1
    block_pad: int = 0             # extra elements between cache blocks (a view of a bigger allocation)
    scale_fmt: Optional[str] = None
    zero_rows: int = 0             # tokens whose first group is all zeros
    huge: bool = False             # some groups scaled to the dtype's large values

    def __str__(self) -> str:
        form = self.layout if self.layout == "fused" else f"split-{self.scale_dtype}-r{4 if self.rank4 else 3}"
        return (f"T{self.tokens}/{self.written}-D{self.head_dim}-q{self.qbs}-{self.num_blocks}x{self.block_size}-"
                f"{form}-kp{self.k_pad}-neg{self.padding}-bp{self.block_pad}-{self.scale_fmt}-z{self.zero_rows}"
                f"{'-huge' if self.huge else ''}")


def _padded_blocks(shape, dtype, pad, rng, fill):
    """A random array of `shape` as a view whose blocks (dim 0) are `pad` elements further apart."""
    nb = shape[0]
    per_block = int(np.prod(shape[1:]))
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        base = rng.integers(info.min, info.max + 1, size=(nb, per_block + pad), dtype=dtype)
    else:
        base = rng.standard_normal((nb, per_block + pad)).astype(dtype)
    if pad:
        base[:, per_block:] = fill
    return base[:, :per_block].reshape(shape)


def make(case: Case, k_dtype: str, slot_dtype, seed: int = 0):
    """k, k_cache, slot_mapping, k_scale_cache (None when fused), kwargs. bfloat16 k as uint16 bits."""
    rng = np.random.default_rng(seed)
    c = case
    g = c.head_dim // c.qbs
    values = rng.standard_normal((c.tokens, c.head_dim)) * rng.uniform(0.01, 10, (c.tokens, 1))
    if c.huge:
        big = {"float16": 6.0e4, "bfloat16": 3.0e37, "float32": 3.0e37}[k_dtype]
        if c.layout == "split" and c.scale_dtype == "float16" and k_dtype != "float16":
            big = 8.0e6  # the largest amax whose float16 scale does not overflow is about 127 * 65504
        rows = rng.choice(c.tokens, size=max(1, c.tokens // 3), replace=False)
        values[rows, : c.qbs] *= big / np.abs(values[rows, : c.qbs]).max(axis=1, keepdims=True)
    if c.zero_rows:
        values[rng.choice(c.tokens, size=c.zero_rows, replace=False), : c.qbs] = 0.0
    if k_dtype == "bfloat16":
        k_full = to_bf16_bits(values.astype(np.float32))
    else:
        k_full = values.astype(k_dtype)
    if c.k_pad:
        fill = 0xFFFF if k_dtype == "bfloat16" else np.nan
        buf = np.full((c.tokens, c.head_dim + c.k_pad), fill, dtype=k_full.dtype)
        buf[:, : c.head_dim] = k_full
        k = buf[:, : c.head_dim]
    else:
        k = k_full
    if c.layout == "fused":
        cache = _padded_blocks((c.num_blocks, c.block_size, c.head_dim + 4 * g), np.uint8, c.block_pad, rng, 0xA5)
        scales = None
    else:
        tail = (1,) if c.rank4 else ()
        cache = _padded_blocks((c.num_blocks, c.block_size) + tail + (c.head_dim,), np.int8, c.block_pad, rng, 0x5A)
        scales = _padded_blocks((c.num_blocks, c.block_size) + tail + (g,), np.dtype(c.scale_dtype), c.block_pad, rng,
                                7.0)
    slots = rng.permutation(c.num_blocks * c.block_size)[: c.written].astype(slot_dtype)
    if c.padding:
        slots[rng.choice(c.written, size=c.padding, replace=False)] = -1
    kwargs = {"quant_block_size": c.qbs, "scale_fmt": c.scale_fmt}
    return k, cache, slots, scales, kwargs


def base_of(view: np.ndarray) -> np.ndarray:
    """The whole allocation a cache view lives in (padding bytes included), for untouched checks."""
    return view if view.base is None else view.base


# Split int8 cases: D in {128, 64, 256}, qbs in {D, D/2, 32}, both cache ranks, both scale dtypes,
# T' < T, padding, strided k rows, views with a larger block stride, zero groups, huge values.
SPLIT = [
    Case(1, 1, 128, 128, 1, 16),
    Case(7, 5, 128, 64, 4, 8, padding=2, rank4=False, scale_dtype="float32"),
    Case(19, 19, 64, 32, 5, 16, k_pad=16, zero_rows=3),
    Case(33, 30, 256, 128, 3, 16, scale_dtype="float32", padding=4, block_pad=64),
    Case(50, 50, 256, 32, 8, 8, rank4=False, zero_rows=2, huge=True),
    Case(64, 60, 64, 64, 16, 4, k_pad=64, padding=5, block_pad=32, huge=True, scale_dtype="float32"),
    Case(100, 100, 128, 32, 10, 16, padding=10),
    Case(24, 20, 256, 256, 4, 8, padding=2, rank4=False, k_pad=32, zero_rows=1, huge=True),
    Case(5, 0, 128, 128, 2, 4),
]
# Fused (vLLM) cases: with / without ue8m0, a block stride larger than the block.
FUSED = [
    Case(1, 1, 128, 128, 1, 16, layout="fused"),
    Case(9, 7, 128, 128, 4, 4, layout="fused", scale_fmt="ue8m0", padding=2),
    Case(21, 21, 128, 64, 3, 16, layout="fused", block_pad=48, k_pad=8, zero_rows=2),
    Case(40, 35, 256, 32, 6, 8, layout="fused", scale_fmt="ue8m0", block_pad=100, huge=True, padding=3),
    Case(16, 16, 64, 64, 2, 16, layout="fused", huge=True, zero_rows=1),
]
