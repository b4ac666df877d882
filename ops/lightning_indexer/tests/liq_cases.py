"""Shared case makers of the lightning_indexer_quant tests.

The top-k comparison is lightning_indexer's own (its tests' li_cases.assert_topk, tol = 1e-5 * M
per row): the same rule, with this op's magnitude
M = max_j |ks(j)| * sum_h |weights * qs| * max(dot[h, j], 0) (reference.Row.magnitude).
"""
from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np

from ascend_ops.lightning_indexer_quant import reference

# the float op's shape record, layouts, modes and comparison rule
from li_cases import K_LAYOUTS, MODES, Q_LAYOUTS, RTOL, Shape, assert_topk  # noqa: F401

SHAPES = [
    Shape((1, 1, 1), (37, 200, 5), 64, 128, 64, name="decode-N64-D128"),
    Shape((9, 4), (150, 3), 4, 32, 20, block_size=8, name="prefill-s1>s2"),
    Shape((5, 5), (70, 130), 6, 24, 100, n2=2, block_size=8, name="gqa-N2=2"),
    Shape((7,), (7,), 3, 13, 1, block_size=4, name="K1-odd-D13"),
    Shape((3, 0, 2), (0, 40, 17), 20, 16, 8, name="empty-batches-N20"),
    Shape((20, 11), (1500, 900), 16, 64, 256, block_size=64, name="multi-chunk"),
]


def _float(shape, dtype: str, rng, low=-1.0, high=1.0) -> np.ndarray:
    return rng.uniform(low, high, shape).astype(np.float32).astype(dtype)


def make(shape: Shape, layout_query: str, layout_key: str, weights_dtype: str = "float32",
         scale_dtype: str = "float32", seed: int = 0, length_dtype=np.int32, key_pool: Optional[int] = None,
         ks_trailing_one: bool = False) -> Dict:
    """Keyword arguments of the op (NumPy) for one case: int8 in [-127, 127], scales ~ amax/127."""
    rng = np.random.default_rng(seed)
    B, n1, n2, d = len(shape.s1), shape.n1, shape.n2, shape.d
    args: Dict = dict(layout_query=layout_query, layout_key=layout_key, sparse_count=shape.k)
    lead = (B, max(shape.s1) + shape.extra_q) if layout_query == "BSND" else (sum(shape.s1) + shape.extra_q,)
    args["query"] = rng.integers(-127, 128, lead + (n1, d), dtype=np.int8)
    args["weights"] = _float(lead + (n1,), weights_dtype, rng)
    args["query_dequant_scale"] = _float(lead + (n1,), scale_dtype, rng, 1e-3, 3e-2)
    if layout_query == "BSND":
        args["actual_seq_lengths_query"] = np.array(shape.s1, dtype=length_dtype)
    else:
        args["actual_seq_lengths_query"] = np.cumsum(shape.s1).astype(length_dtype)

    def keys(n: int):
        k = rng.integers(-127, 128, (n, n2, d), dtype=np.int8)
        s = _float((n, n2), scale_dtype, rng, 1e-3, 3e-2)
        if key_pool is not None:  # repeated keys (equal scores: the tie rule)
            pick = rng.integers(0, key_pool, n)
            k, s = k[:key_pool][pick], s[:key_pool][pick]
        return k, s

    if layout_key == "PA_BSND":
        bs = shape.block_size
        used = [(s + bs - 1) // bs for s in shape.s2]
        num_blocks = sum(used) + 2
        max_blocks = max(used + [0]) + 1
        k, s = keys(num_blocks * bs)
        args["key"] = k.reshape(num_blocks, bs, n2, d)
        args["key_dequant_scale"] = s.reshape((num_blocks, bs, n2) + ((1,) if ks_trailing_one else ()))
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
        k, s = keys(B * s2)
        args["key"] = k.reshape(B, s2, n2, d)
        args["key_dequant_scale"] = s.reshape(B, s2, n2)
        args["actual_seq_lengths_key"] = np.array(shape.s2, dtype=length_dtype)
    else:
        k, s = keys(sum(shape.s2) + 2)
        args["key"], args["key_dequant_scale"] = k, s
        args["actual_seq_lengths_key"] = np.cumsum(shape.s2).astype(length_dtype)
    return args


def reference_rows(args: Dict, sparse_mode: int, numerics: str = "exact") -> List[reference.Row]:
    a = dict(args, numerics=numerics)
    a.pop("sparse_count")
    for extra in ("return_value", "query_quant_mode", "key_quant_mode"):
        a.pop(extra, None)
    a["sparse_mode"] = sparse_mode
    return list(reference.rows(**a))
