"""Inputs of sparse_flash_attention in every layout, and the comparison with the float64
reference under the contract's tolerance (README "Tolerance")."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

import ml_dtypes
import numpy as np

from ascend_ops.sparse_flash_attention import reference

DTYPES = ["float32", "bfloat16", "float16"]
Q_LAYOUTS = ["BSND", "TND"]
KV_LAYOUTS = ["PA_BSND", "BSND", "TND"]
MODES = [0, 3]
UNIT = {"float32": 0.0, "bfloat16": 2.0 ** -8, "float16": 2.0 ** -11}
NP_DTYPE = {"float32": np.float32, "bfloat16": ml_dtypes.bfloat16, "float16": np.float16}


@dataclass(frozen=True)
class Shape:
    act_q: Tuple[int, ...]    # rows per batch (S1 = max for BSND)
    act_kv: Tuple[int, ...]   # keys per batch
    n1: int
    d: int
    dr: int
    k: int                    # index entries per row
    block_size: int = 16
    sbs: int = 1
    s1_pad: int = 0           # BSND: extra query rows beyond every batch
    s2_pad: int = 3           # BSND / TND keys and PA_BSND blocks beyond every batch

    def __str__(self):
        return f"q{self.act_q}-kv{self.act_kv}-n{self.n1}-d{self.d}+{self.dr}-k{self.k}-bs{self.block_size}-sbs{self.sbs}"


SHAPES = [
    Shape((3, 1), (37, 5), 4, 32, 8, 8, block_size=8),
    Shape((1, 1, 1), (100, 7, 64), 16, 64, 16, 24, block_size=16, s1_pad=0),
    Shape((5, 2), (40, 33), 2, 16, 4, 6, block_size=4, sbs=2, s1_pad=2),
    Shape((4,), (300,), 8, 48, 0, 64, block_size=32, sbs=4),
]


def _values(rng, shape, dtype, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(NP_DTYPE[dtype])


def row_indices(rng, k: int, act_kv: int, sbs: int, tail: bool, duplicates: bool = False) -> np.ndarray:
    """K entries: distinct logical blocks of the batch in random order (some beyond a causal
    window), optionally a -1 tail (then junk after it) and repeats."""
    blocks = -(-act_kv // sbs)
    take = min(k, blocks)
    row = np.full(k, -1, dtype=np.int32)
    if take:
        row[:take] = rng.permutation(blocks)[:take]
    if duplicates and take > 1:
        row[take - 1] = row[0]
    if tail and take > 1:
        cut = int(rng.integers(1, take + 1))
        row[cut:] = -1
        if cut + 1 < k:
            row[cut + 1:] = rng.integers(-1, blocks + 5, size=k - cut - 1)  # ignored after the -1
    return row


def make(shape: Shape, layout_query: str, layout_kv: str, dtype: str, seed: int = 0, *,
         value_is_key: bool = True, shared_cache: bool = False, tails: bool = True, duplicates: bool = False,
         length_dtype=np.int32) -> dict:
    """Keyword arguments of the op (NumPy arrays) for one case."""
    rng = np.random.default_rng(seed)
    B = len(shape.act_q)
    S1 = max(shape.act_q) + shape.s1_pad
    N1, D, Dr, K = shape.n1, shape.d, shape.dr, shape.k
    args = {"scale_value": float(1.0 / np.sqrt(D + Dr)), "layout_query": layout_query, "layout_kv": layout_kv,
            "sparse_block_size": shape.sbs}
    if layout_query == "TND":
        T1 = sum(shape.act_q)
        args["query"] = _values(rng, (T1, N1, D), dtype)
        args["query_rope"] = _values(rng, (T1, N1, Dr), dtype)
        args["actual_seq_lengths_query"] = np.cumsum(shape.act_q).astype(length_dtype)
        rows_of = [(sum(shape.act_q[:b]), shape.act_q[b]) for b in range(B)]
        idx = np.full((T1, 1, K), -1, dtype=np.int32)
    else:
        args["query"] = _values(rng, (B, S1, N1, D), dtype)
        args["query_rope"] = _values(rng, (B, S1, N1, Dr), dtype)
        if shape.s1_pad or len(set(shape.act_q)) > 1:
            args["actual_seq_lengths_query"] = np.array(shape.act_q, dtype=length_dtype)
        rows_of = [(b * S1, shape.act_q[b]) for b in range(B)]
        idx = np.full((B, S1, 1, K), -1, dtype=np.int32)
    flat = idx.reshape(-1, K)
    for b, (begin, n) in enumerate(rows_of):
        for r in range(n):
            flat[begin + r] = row_indices(rng, K, shape.act_kv[b], shape.sbs, tails and (r + b) % 2 == 0,
                                          duplicates)
    args["sparse_indices"] = idx

    if layout_kv == "PA_BSND":
        bs = shape.block_size
        used = [-(-n // bs) for n in shape.act_kv]
        num_blocks = sum(used) + shape.s2_pad
        max_blocks = max(used) + 1
        ids = rng.permutation(num_blocks)
        table = np.full((B, max_blocks), 10 ** 6, dtype=length_dtype)  # entries past a batch's end are never read
        at = 0
        for b in range(B):
            table[b, :used[b]] = ids[at:at + used[b]]
            at += used[b]
        kv_shape, rope_shape = (num_blocks, bs, 1, D), (num_blocks, bs, 1, Dr)
        args["block_table"] = table
        args["actual_seq_lengths_kv"] = np.array(shape.act_kv, dtype=length_dtype)
    elif layout_kv == "BSND":
        S2 = max(shape.act_kv) + shape.s2_pad
        kv_shape, rope_shape = (B, S2, 1, D), (B, S2, 1, Dr)
        args["actual_seq_lengths_kv"] = np.array(shape.act_kv, dtype=length_dtype)
    else:
        T2 = sum(shape.act_kv) + shape.s2_pad
        kv_shape, rope_shape = (T2, 1, D), (T2, 1, Dr)
        args["actual_seq_lengths_kv"] = np.cumsum(shape.act_kv).astype(length_dtype)
    if shared_cache and layout_kv == "PA_BSND":
        # Latent and rope as views of one [num_blocks, 2, block_size, ...] allocation each, as an
        # engine that keeps two caches in one tensor does: a block stride twice the block.
        both = _values(rng, (kv_shape[0], 2) + kv_shape[1:], dtype)
        args["key"] = both[:, 0]
        rope_both = _values(rng, (rope_shape[0], 2) + rope_shape[1:], dtype)
        args["key_rope"] = rope_both[:, 1]
    else:
        args["key"] = _values(rng, kv_shape, dtype)
        args["key_rope"] = _values(rng, rope_shape, dtype)
    args["value"] = args["key"] if value_is_key else args["key"].copy()
    return args


def reference_args(args: dict) -> dict:
    keep = ("block_table", "actual_seq_lengths_query", "actual_seq_lengths_kv", "query_rope", "key_rope",
            "sparse_block_size", "layout_query", "layout_kv")
    return {k: args[k] for k in keep if k in args}


def assert_matches(got: Sequence[Optional[np.ndarray]], args: dict, dtype: str, sparse_mode: int,
                   lse: bool = True) -> None:
    """attention_out (and the lse pair) within the contract's bounds of the float64 reference;
    exact zeros where the reference has no positions."""
    pos = (args["query"], args["key"], args["value"], args["sparse_indices"], args["scale_value"])
    kw = reference_args(args)
    want_out, want_max, want_sum = reference.sparse_flash_attention(*pos, **kw, sparse_mode=sparse_mode)
    out_b, max_b, sum_b = reference.tolerance(*pos, dtype_unit=UNIT[dtype], **kw, sparse_mode=sparse_mode)
    out = np.asarray(got[0]).astype(np.float64)
    assert out.shape == want_out.shape
    err = np.abs(out - want_out)
    bound = out_b + UNIT[dtype] * np.abs(want_out) + 1e-30
    assert np.all(err <= bound), f"attention_out: worst error / bound {np.max(err / bound):.3f}"
    if lse:
        m, l = np.asarray(got[1]).astype(np.float64), np.asarray(got[2]).astype(np.float64)
        assert m.shape == want_max.shape and l.shape == want_sum.shape
        assert np.all(np.abs(m - want_max) <= max_b + 1e-30), "softmax_max differs from the reference"
        assert np.all(np.abs(l - want_sum) <= sum_b * np.abs(want_sum) + 1e-30), "softmax_sum differs"


def to_torch(args: dict) -> dict:
    """NumPy arguments as CPU torch tensors sharing their memory (bfloat16 reinterpreted); value
    stays the same tensor as key when it is."""
    import torch

    out = {}
    for name, value in args.items():
        if isinstance(value, np.ndarray):
            bf16 = value.dtype == ml_dtypes.bfloat16
            value = torch.from_numpy(value.view(np.int16) if bf16 else value)
            value = value.view(torch.bfloat16) if bf16 else value
        out[name] = value
    if "key" in args and args.get("value") is args["key"]:
        out["value"] = out["key"]
    return out


def torch_to_numpy(t) -> np.ndarray:
    import torch

    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()
