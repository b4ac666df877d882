"""8 threads calling lightning_indexer at once, with tiling and operator caches of 2 entries
(fewer than the shapes in play, so entries are evicted while other threads use them).

Through torch on CPU (its CPU plan is cached) and through the emulated AscendC kernel (its
tiling too): inputs are small integers, so scores are exact and every result must equal the
reference exactly; afterwards the cache counters must be consistent (each lookup a hit or a
miss, as many lookups as the calls make one at a time, entries = inserts - evictions <= capacity).
"""
from __future__ import annotations


import numpy as np
import pytest

from ascend_ops.devkit.fuzzing import front_doors
from ascend_ops.devkit.stress import hammer
from ascend_ops.devkit.testing import from_bf16_bits, to_bf16_bits
from ascend_ops.lightning_indexer import lightning_indexer, reference

THREADS = 8
DOORS = front_doors("ascend_ops.lightning_indexer")
# (S1 per batch, act_s2 per batch, N1, K, dtype): D = 128, N2 = 1, block_size 16, as the
# AscendC kernel needs.
SHAPES = [
    ((1, 1), (40, 17), 4, 8, "float16"),
    ((4,), (70,), 8, 16, "bfloat16"),
    ((2, 2, 2), (5, 33, 64), 4, 40, "float16"),
    ((1,), (200,), 8, 64, "bfloat16"),
    ((3, 1), (48, 16), 4, 3, "float16"),
]
D, BLOCK_SIZE = 128, 16


def make(s1, s2, n1, k, dtype, seed):
    rng = np.random.default_rng(seed)
    batch, s1_max = len(s1), max(s1)
    blocks_per_seq = -(-max(s2) // BLOCK_SIZE)
    num_blocks = batch * blocks_per_seq + 2

    def small_ints(*shape):
        x = rng.integers(-3, 4, shape).astype(np.float32)
        return to_bf16_bits(x) if dtype == "bfloat16" else x.astype(dtype)

    arrays = dict(query=small_ints(batch, s1_max, n1, D), key=small_ints(num_blocks, BLOCK_SIZE, 1, D),
                  weights=small_ints(batch, s1_max, n1))
    kwargs = dict(actual_seq_lengths_query=np.array(s1, np.int32), actual_seq_lengths_key=np.array(s2, np.int64),
                  block_table=rng.permutation(num_blocks)[:batch * blocks_per_seq].reshape(batch, -1).astype(np.int32),
                  sparse_count=k, return_value=True)
    widen = from_bf16_bits if dtype == "bfloat16" else (lambda a: a.astype(np.float32))
    want = reference.lightning_indexer(*(widen(arrays[n]) for n in ("query", "key", "weights")),
                                       kwargs["actual_seq_lengths_query"], kwargs["actual_seq_lengths_key"],
                                       kwargs["block_table"], sparse_count=k)
    return dtype, arrays, kwargs, want


def case_list():
    return [make(*shape, seed=i) for i, shape in enumerate(SHAPES)]




def torch_call(case):
    import torch

    from ascend_ops.lightning_indexer import torch_ops

    dtype, arrays, kwargs, _ = case

    def tensor(a):
        t = torch.from_numpy(a)
        return t.view(torch.bfloat16) if dtype == "bfloat16" and a.dtype == np.uint16 else t

    tensors = {n: tensor(a) for n, a in arrays.items()}
    extra = {n: tensor(v) if isinstance(v, np.ndarray) else v for n, v in kwargs.items()}
    idx, val = torch_ops.lightning_indexer(tensors["query"], tensors["key"], tensors["weights"], **extra)
    return idx.numpy(), val.numpy()


def emu_call(case):
    dtype, arrays, kwargs, _ = case
    return lightning_indexer(arrays["query"], arrays["key"], arrays["weights"], backend="emu",
                             dtype="bfloat16" if dtype == "bfloat16" else None, **kwargs)


def doors():
    # (call, rounds); both go through the tiling cache (the CPU plan, the kernel tiling)
    found = []
    if "torch-cpu" in DOORS:
        found.append(pytest.param(torch_call, 100, id="torch-cpu"))
    if "numpy-emu" in DOORS:
        found.append(pytest.param(emu_call, 1, id="numpy-emu"))
    return found


def compare(case, got, index):
    want_idx, want_val = case[3]
    idx, val = got
    assert np.array_equal(np.asarray(idx), want_idx), f"sparse_indices of case {index} differ"
    assert np.array_equal(np.asarray(val), want_val.astype(np.float32)), f"sparse_values of case {index} differ"


@pytest.mark.parametrize("call,rounds", doors())
def test_threads_share_small_caches_and_results_stay_exact(call, rounds):
    hammer(case_list(), call, compare, rounds=rounds, tiled=True, threads=THREADS)
