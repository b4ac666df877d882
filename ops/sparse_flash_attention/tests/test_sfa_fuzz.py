"""Fuzzer of sparse_flash_attention: random layouts (query BSND / TND, kv PA_BSND / BSND / TND),
dtypes, sizes (N1, D, Dr, K, block_size, sbs), sparse modes, act_q / act_kv (0, beyond K, rows
past every batch), index rows (out-of-window entries, -1 tails with junk after them, repeats),
paged caches as views of a larger allocation, value as key or a copy, lse or not; with faults
planted on top (an index < -1 among the entries read, a block id out of range among the blocks
read, a length beyond its limit, a wrong dtype, a wrong shape).

Every case must end as the golden result (sfa_cases' tolerance, the guard bytes around every
tensor unchanged, inputs unchanged) or as the documented exception with every buffer unchanged;
see :mod:`ascend_ops.devkit.fuzzing`. The emu door draws cases inside the kernel's limits
(D = 512, Dr = 64). ``./dev test`` runs the quick profile, ``AOP_FUZZ_EXAMPLES=10000`` the long one.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ascend_ops.devkit.fuzzing import Fault, check_call, front_doors, fuzz_settings, guarded, owners
from ascend_ops.sparse_flash_attention import sparse_flash_attention

from sfa_cases import NP_DTYPE, assert_matches, row_indices, to_torch, torch_to_numpy

OP = "sparse_flash_attention"
DOORS = front_doors("ascend_ops.sparse_flash_attention")
TENSORS = ("query", "key", "value", "sparse_indices", "block_table", "actual_seq_lengths_query",
           "actual_seq_lengths_kv", "query_rope", "key_rope")


def choose(rng, options):
    return options[int(rng.integers(len(options)))]


def draw_case(rng, door: str) -> dict:
    """A valid case as keyword arguments (guarded arrays), plus "_dtype" and "_mode"."""
    emu = door == "numpy-emu"
    dtype = choose(rng, ["bfloat16", "float16"] if emu else ["bfloat16", "float16", "float32"])
    layout_query = choose(rng, ["BSND", "TND"])
    layout_kv = choose(rng, ["PA_BSND", layout_query])
    mode = choose(rng, [0, 3])
    B = int(rng.integers(1, 4))
    n1 = choose(rng, [1, 2, 4, 16] if emu else [1, 2, 3, 5, 8, 16])
    d, dr = (512, 64) if emu else (int(rng.integers(1, 40)), int(rng.integers(0, 12)))
    sbs = choose(rng, [1, 1, 2, 4, 16] if emu else [1, 1, 2, 3, 8])
    block_size = choose(rng, [16, 32, 64, 128]) if emu else int(rng.integers(1, 20))
    if emu and block_size % sbs:
        sbs = 1
    k = int(rng.integers(1, 40))
    act_q = [int(rng.integers(0, 5)) for _ in range(B)]
    act_kv = [choose(rng, [0, 1, int(rng.integers(1, 90)), int(rng.integers(1, 300))]) for _ in range(B)]
    s1 = max(act_q + [1]) + int(rng.integers(0, 2))
    gen = lambda shape: rng.standard_normal(shape).astype(NP_DTYPE[dtype])  # noqa: E731
    c = {"scale_value": float(rng.uniform(0.01, 0.5)), "sparse_block_size": sbs, "layout_query": layout_query,
         "layout_kv": layout_kv, "sparse_mode": mode, "return_softmax_lse": bool(rng.integers(2)),
         "_dtype": dtype}
    if layout_query == "TND":
        t1 = sum(act_q)
        c["query"] = guarded((t1, n1, d), NP_DTYPE[dtype], rng, values=gen((t1, n1, d)))
        c["query_rope"] = guarded((t1, n1, dr), NP_DTYPE[dtype], rng, values=gen((t1, n1, dr)))
        c["actual_seq_lengths_query"] = guarded((B,), np.int32, rng, values=np.cumsum(act_q))
        begins = list(np.cumsum([0] + act_q[:-1]))
        idx = guarded((t1, 1, k), np.int32, rng, values=-1)
    else:
        c["query"] = guarded((B, s1, n1, d), NP_DTYPE[dtype], rng, values=gen((B, s1, n1, d)))
        c["query_rope"] = guarded((B, s1, n1, dr), NP_DTYPE[dtype], rng, values=gen((B, s1, n1, dr)))
        c["actual_seq_lengths_query"] = guarded((B,), np.int32, rng, values=act_q)
        begins = [b * s1 for b in range(B)]
        idx = guarded((B, s1, 1, k), np.int32, rng, values=-1)
    flat = idx.reshape(-1, k)
    for b in range(B):
        for r in range(act_q[b]):
            flat[begins[b] + r] = row_indices(rng, k, act_kv[b], sbs, bool(rng.integers(2)), bool(rng.integers(4) == 0))
    c["sparse_indices"] = idx
    if layout_kv == "PA_BSND":
        used = [-(-n // block_size) for n in act_kv]
        nb = sum(used) + int(rng.integers(1, 3))
        width = max(used + [1]) + int(rng.integers(0, 2))
        ids = rng.permutation(nb)
        table = rng.integers(-10**6, 10**6, size=(B, width)).astype(np.int32)  # unread entries: junk
        at = 0
        for b in range(B):
            table[b, :used[b]] = ids[at:at + used[b]]
            at += used[b]
        c["block_table"] = guarded((B, width), np.int32, rng, values=table)
        c["actual_seq_lengths_kv"] = guarded((B,), np.int32, rng, values=act_kv)
        kv_shape, rope_shape = (nb, block_size, 1, d), (nb, block_size, 1, dr)
    elif layout_kv == "BSND":
        s2 = max(act_kv + [1]) + int(rng.integers(0, 3))
        kv_shape, rope_shape = (B, s2, 1, d), (B, s2, 1, dr)
        c["actual_seq_lengths_kv"] = guarded((B,), np.int32, rng, values=act_kv)
    else:
        t2 = sum(act_kv) + int(rng.integers(0, 3))
        kv_shape, rope_shape = (t2, 1, d), (t2, 1, dr)
        c["actual_seq_lengths_kv"] = guarded((B,), np.int32, rng, values=np.cumsum(act_kv))
    # Paged caches may sit in a larger allocation: blocks further apart than a block.
    pad = int(rng.integers(0, 3)) if layout_kv == "PA_BSND" else 0
    c["key"] = _cache(kv_shape, dtype, rng, pad)
    c["key_rope"] = _cache(rope_shape, dtype, rng, int(rng.integers(0, 3)) if layout_kv == "PA_BSND" else 0)
    c["value"] = c["key"] if rng.integers(4) else _copy_like(c["key"], rng)
    return c


def _cache(shape, dtype, rng, pad_rows: int):
    row = int(np.prod(shape[1:]))
    values = rng.standard_normal(shape).astype(NP_DTYPE[dtype])
    return guarded((shape[0], row), NP_DTYPE[dtype], rng, row_pad=pad_rows * row, values=values.reshape(shape[0], row)
                   ).reshape(shape)


def _copy_like(a, rng):
    """An equal copy with the same strides (value's block stride must be key's)."""
    pad = a.strides[0] // a.itemsize - int(np.prod(a.shape[1:]))
    row = int(np.prod(a.shape[1:]))
    out = guarded((a.shape[0], row), a.dtype, rng, row_pad=pad, values=a.reshape(a.shape[0], row))
    return out.reshape(a.shape)


# --- faults ---------------------------------------------------------------------------------
def _read_rows(c):
    """(flat row, n) of every row of a batch that reads at least one entry (n >= 1), from the
    lengths as the case holds them now."""
    lq = [int(v) for v in np.asarray(c["actual_seq_lengths_query"])]
    lkv = [int(v) for v in np.asarray(c["actual_seq_lengths_kv"])]
    if c["layout_query"] == "TND":
        begins, act_q = [0] + lq[:-1], [e - b for e, b in zip(lq, [0] + lq[:-1])]
    else:
        s1 = c["query"].shape[1]
        begins, act_q = [b * s1 for b in range(len(lq))], lq
    act_kv = [e - b for e, b in zip(lkv, [0] + lkv[:-1])] if c["layout_kv"] == "TND" else lkv
    k, sbs = c["sparse_indices"].shape[-1], c["sparse_block_size"]
    out = []
    for b, (begin, q, kv) in enumerate(zip(begins, act_q, act_kv)):
        for r in range(max(q, 0)):
            thr = kv if c["sparse_mode"] == 0 else kv - q + r + 1
            n = min(k, -(-thr // sbs)) if thr > 0 else 0
            if n:
                out.append((begin + r, n))
    return out


def plant(c, rng):
    """Zero to two faults; returns the Faults planted."""
    faults = []
    for _ in range(int(rng.integers(0, 3)) if rng.integers(2) else 0):
        kind = int(rng.integers(5))
        if kind == 0:
            rows = _read_rows(c)
            if not rows:
                continue
            row, n = choose(rng, rows)
            flat = c["sparse_indices"].reshape(-1, c["sparse_indices"].shape[-1])
            first = next((i for i in range(n) if flat[row, i] == -1), n)
            flat[row, int(rng.integers(0, first + 1)) if first < n else int(rng.integers(0, n))] = choose(
                rng, [-2, -100, -2**31])
            faults.append(Fault("index < -1", IndexError))
        elif kind == 1 and c["layout_kv"] == "PA_BSND":
            bs = c["key"].shape[1]
            lens = np.asarray(c["actual_seq_lengths_kv"])
            width = c["block_table"].shape[1]
            readers = [b for b in range(len(lens)) if 0 < lens[b] <= width * bs]  # not a length fault
            if not readers:
                continue
            b = choose(rng, readers)
            c["block_table"][b, int(rng.integers(0, -(-int(lens[b]) // bs)))] = choose(
                rng, [-1, c["key"].shape[0], 2**31 - 1])
            faults.append(Fault("block id", IndexError))
        elif kind == 2:
            name = "actual_seq_lengths_kv"
            c[name][int(rng.integers(len(c[name])))] = choose(rng, [-1, 10**7])
            faults.append(Fault("length", ValueError))
        elif kind == 3:
            name = choose(rng, ["key_rope", "query_rope", "sparse_indices"])
            c[name] = c[name].astype(np.float64 if name != "sparse_indices" else np.int64)
            faults.append(Fault(f"{name} dtype", TypeError))
        else:
            c["query_rope"] = np.ascontiguousarray(c["query_rope"][..., :-1, :])
            faults.append(Fault("query_rope N1", ValueError))
    return faults


@pytest.mark.parametrize("door", DOORS)
@fuzz_settings()
@given(seed=st.integers(0, 2**63 - 1))
def test_fuzz(door, seed):
    rng = np.random.default_rng(seed)
    c = draw_case(rng, door)
    faults = plant(c, rng)
    dtype = c.pop("_dtype")
    kwargs = {k: v for k, v in c.items() if k not in TENSORS}
    buffers = owners(*(c.get(n) for n in TENSORS))
    before = [b.tobytes() for b in buffers]
    golden = {n: (c[n].copy() if isinstance(c.get(n), np.ndarray) else c.get(n)) for n in TENSORS}
    if c["value"] is c["key"]:
        golden["value"] = golden["key"]

    if door == "torch-cpu":
        def call():
            outs = sparse_flash_attention(**to_torch({n: c.get(n) for n in TENSORS}), **kwargs)
            return [None if t is None else torch_to_numpy(t) for t in outs]
    else:
        backend = "emu" if door == "numpy-emu" else "cpu"

        def call():
            return sparse_flash_attention(**{n: c.get(n) for n in TENSORS}, **kwargs, backend=backend)

    def check(outs):
        args = dict(golden, scale_value=c["scale_value"], sparse_block_size=c["sparse_block_size"],
                    layout_query=c["layout_query"], layout_kv=c["layout_kv"])
        assert_matches(outs, args, dtype, c["sparse_mode"], lse=c["return_softmax_lse"])
        for index, (b, old) in enumerate(zip(buffers, before)):
            assert b.tobytes() == old, f"buffer {index} (an input or its guard bytes) changed"

    check_call(OP, call, buffers=buffers, faults=faults, check=check, door=door)

