"""Shared case makers and the top-k comparison of the lightning_indexer tests (NumPy side).

Comparison rule (the op README's documented tolerance): for each output row, with the
reference's float64 scores s sorted descending and the row magnitude
M = max_j sum_h |w_h| * sum_d |q_hd * k_jd|, the tolerance is tol = RTOL * M (float32
accumulation; products of float16 / bfloat16 inputs are exact in float32).
- exactly min(K, visible) indices, distinct and visible, then -1;
- position p holds a key whose reference score is within tol of s[p] (equal score multisets);
- where s[p] is separated from its neighbours by more than tol, the index is exactly the
  reference's;
- sparse_values within tol of the reference scores of the returned indices, -inf at -1.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np

from ascend_ops.devkit.testing import from_bf16_bits, to_bf16_bits
from ascend_ops.lightning_indexer import reference

RTOL = 1e-5
DTYPES = ("float16", "bfloat16", "float32")
Q_LAYOUTS = ("BSND", "TND")
K_LAYOUTS = ("PA_BSND", "BSND", "TND")
MODES = (0, 3)


@dataclass(frozen=True)
class Shape:
    s1: Tuple[int, ...]      # act_s1 per batch
    s2: Tuple[int, ...]      # act_s2 per batch
    n1: int
    d: int
    k: int                   # sparse_count
    n2: int = 1
    block_size: int = 16
    extra_q: int = 1         # padding rows past the batches (BSND: S1 - max act_s1; TND: T1 - sum)
    name: str = ""

    def __str__(self) -> str:
        return self.name or f"s1{list(self.s1)}-s2{list(self.s2)}-N{self.n1}/{self.n2}-D{self.d}-K{self.k}"


SHAPES = [
    Shape((1, 1, 1), (37, 200, 5), 8, 128, 64, name="decode-B3-K64"),
    Shape((9, 4), (150, 3), 4, 32, 20, block_size=8, name="prefill-s1>s2"),
    Shape((5, 5), (70, 130), 6, 24, 100, n2=2, block_size=8, name="gqa-N2=2"),
    Shape((7,), (7,), 3, 16, 1, block_size=4, name="K1-odd"),
    Shape((3, 0, 2), (0, 40, 17), 4, 16, 8, name="empty-batches"),
    Shape((20, 11), (1500, 900), 16, 64, 256, block_size=64, name="multi-chunk"),
]


def _data(shape, dtype: str, rng) -> np.ndarray:
    x = rng.standard_normal(shape, dtype=np.float32)
    if dtype == "bfloat16":
        return to_bf16_bits(x)
    return x.astype(dtype)


def values_of(a: np.ndarray, dtype: str) -> np.ndarray:
    """The exact values of an op input (bfloat16 bit patterns widened)."""
    return from_bf16_bits(a) if dtype == "bfloat16" and a.dtype == np.uint16 else a


def make(shape: Shape, layout_query: str, layout_key: str, dtype: str, seed: int = 0,
         length_dtype=np.int32, weights_fp32: bool = False, key_pool: Optional[int] = None) -> Dict:
    """Keyword arguments of the op (NumPy, bfloat16 as uint16 bits) for one case."""
    rng = np.random.default_rng(seed)
    B, n1, n2, d = len(shape.s1), shape.n1, shape.n2, shape.d
    args: Dict = dict(layout_query=layout_query, layout_key=layout_key, sparse_count=shape.k)
    if layout_query == "BSND":
        s1 = max(shape.s1) + shape.extra_q
        args["query"] = _data((B, s1, n1, d), dtype, rng)
        args["weights"] = _data((B, s1, n1), "float32" if weights_fp32 else dtype, rng)
        args["actual_seq_lengths_query"] = np.array(shape.s1, dtype=length_dtype)
    else:
        t1 = sum(shape.s1) + shape.extra_q
        args["query"] = _data((t1, n1, d), dtype, rng)
        args["weights"] = _data((t1, n1), "float32" if weights_fp32 else dtype, rng)
        args["actual_seq_lengths_query"] = np.cumsum(shape.s1).astype(length_dtype)

    def keys(n: int) -> np.ndarray:
        if key_pool is None:
            return _data((n, n2, d), dtype, rng)
        pool = _data((key_pool, n2, d), dtype, rng)
        return pool[rng.integers(0, key_pool, n)]

    if layout_key == "PA_BSND":
        bs = shape.block_size
        used = [(s + bs - 1) // bs for s in shape.s2]
        num_blocks = sum(used) + 2
        max_blocks = max(used + [0]) + 1
        args["key"] = keys(num_blocks * bs).reshape(num_blocks, bs, n2, d)
        table = np.full((B, max_blocks), 10**6, dtype=length_dtype)  # unused entries are never read
        ids = rng.permutation(num_blocks)
        at = 0
        for b, u in enumerate(used):
            table[b, :u] = ids[at:at + u]
            at += u
        args["block_table"] = table
        args["actual_seq_lengths_key"] = np.array(shape.s2, dtype=length_dtype)
    elif layout_key == "BSND":
        s2 = max(shape.s2) + 3
        args["key"] = keys(B * s2).reshape(B, s2, n2, d)
        args["actual_seq_lengths_key"] = np.array(shape.s2, dtype=length_dtype)
    else:
        t2 = sum(shape.s2) + 2
        args["key"] = keys(t2)
        args["actual_seq_lengths_key"] = np.cumsum(shape.s2).astype(length_dtype)
    return args


def compress(args: Dict, ratio: int, residual=None, seed: int = 0, dtype=np.int32) -> Dict:
    """Makes the case's keys compressed rows (DeepSeek-V4): cmp_ratio = ratio and cmp_residual_k
    (``residual``: one per batch, or random in [0, ratio) when None; absent for ratio 1)."""
    lk = args["actual_seq_lengths_key"]
    batch = len(lk) if lk is not None else args["key"].shape[0]
    args["cmp_ratio"] = ratio
    if ratio == 1:
        args["cmp_residual_k"] = None
    elif residual is None:
        args["cmp_residual_k"] = np.random.default_rng(seed).integers(0, ratio, batch).astype(dtype)
    else:
        args["cmp_residual_k"] = np.array(residual, dtype=dtype)
    return args


def reference_rows(args: Dict, dtype: str, sparse_mode: int) -> List[reference.Row]:
    a = dict(args)
    for name in ("query", "key", "weights"):
        a[name] = values_of(a[name], dtype)
    a.pop("sparse_count")
    return list(reference.rows(sparse_mode=sparse_mode, **a))


def assert_topk(got_idx: np.ndarray, got_val: Optional[np.ndarray], rows: List[reference.Row], k: int,
                exact: bool = False, rtol: float = RTOL) -> None:
    """The comparison rule of the module docstring (tol = rtol * M); exact=True: indices equal the
    reference's."""
    got_idx = np.asarray(got_idx)
    covered = np.zeros(got_idx.shape[:-1], dtype=bool)
    for row in rows:
        covered[row.out] = True
        s = row.scores
        order = np.lexsort((np.arange(len(s)), -s))
        kk = min(k, len(s))
        want, ranked = order[:kk], s[order]
        gi = got_idx[row.out]
        where = f"row {row.out}"
        assert (gi[kk:] == -1).all(), f"{where}: expected {kk} indices then -1, got {gi.tolist()}"
        gk = gi[:kk].astype(np.int64)
        assert ((gk >= 0) & (gk < len(s))).all(), f"{where}: indices out of the visible range {len(s)}: {gk}"
        assert len(np.unique(gk)) == kk, f"{where}: repeated indices"
        if exact:
            np.testing.assert_array_equal(gk, want, err_msg=where)
        tol = rtol * row.magnitude
        far = np.abs(s[gk] - ranked[:kk]) > tol
        assert not far.any(), (f"{where}: position {np.argmax(far)} holds key {gk[np.argmax(far)]} scoring "
                               f"{s[gk][np.argmax(far)]}, the reference's score there is {ranked[np.argmax(far)]}")
        gaps = np.diff(ranked)  # <= 0
        above = np.concatenate([[np.inf], -gaps])[:kk]
        below = np.concatenate([-gaps, [np.inf]])[:kk]
        separated = (above > tol) & (below > tol)
        bad = separated & (gk != want)
        assert not bad.any(), f"{where}: separated position {np.argmax(bad)}: got {gk[bad][:5]}, want {want[bad][:5]}"
        if got_val is not None:
            gv = np.asarray(got_val)[row.out]
            assert np.all(np.abs(gv[:kk] - s[gk]) <= tol), f"{where}: values differ beyond {tol}"
            assert np.all(np.isneginf(gv[kk:])), f"{where}: values past the indices should be -inf"
    rest = got_idx[~covered]
    assert (rest == -1).all(), "rows outside every batch should be all -1"
    if got_val is not None:
        assert np.isneginf(np.asarray(got_val)[~covered]).all()
