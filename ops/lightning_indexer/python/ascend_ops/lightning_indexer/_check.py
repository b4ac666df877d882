"""Quick golden runs for `ascend-ops check`: every backend through every front door built here."""
from __future__ import annotations

from typing import List

import numpy as np

from ascend_ops.common.registry import CheckCase, front_door_cases

from . import reference

# B=2 batches of unequal lengths (act_s1 3 and 2, act_s2 21 and 6), N1=4, D=16, K=8, PA_BSND
# blocks of 4: small, odd sizes, one batch with fewer visible keys than K.
_LENGTHS_Q = np.array([3, 2], dtype=np.int32)
_LENGTHS_K = np.array([21, 6], dtype=np.int32)
_K = 8


def _inputs():
    rng = np.random.default_rng(0)
    query = rng.standard_normal((2, 3, 4, 16)).astype(np.float32)
    key = rng.standard_normal((9, 4, 1, 16)).astype(np.float32)
    weights = rng.standard_normal((2, 3, 4)).astype(np.float32)
    block_table = np.array([[3, 0, 7, 1, 5, 8], [2, 4, -1, -1, -1, -1]], dtype=np.int32)
    return query, key, weights, block_table


def _expect(got_idx, got_val, query, key, weights, block_table) -> None:
    want_idx, want_val = reference.lightning_indexer(query, key, weights, _LENGTHS_Q, _LENGTHS_K, block_table,
                                                     sparse_count=_K)
    if not np.array_equal(np.asarray(got_idx), want_idx):
        raise AssertionError("sparse_indices differ from the reference")
    if not np.allclose(np.asarray(got_val), want_val, rtol=1e-5, atol=1e-5):
        raise AssertionError("sparse_values differ from the reference")


def _numpy():
    from .api import lightning_indexer

    query, key, weights, block_table = _inputs()
    idx, val = lightning_indexer(query, key, weights, actual_seq_lengths_query=_LENGTHS_Q,
                                 actual_seq_lengths_key=_LENGTHS_K, block_table=block_table, sparse_count=_K,
                                 return_value=True)
    _expect(idx, val, query, key, weights, block_table)


def _emu():
    """The AscendC kernel through the emulator: float16, D = 128 (the kernel's limits), the same
    lengths and block table; indices compared where the float64 scores are well separated."""
    from .api import lightning_indexer

    rng = np.random.default_rng(1)
    query = rng.standard_normal((2, 3, 4, 128)).astype(np.float16)
    key = rng.standard_normal((9, 4, 1, 128)).astype(np.float16)
    weights = rng.standard_normal((2, 3, 4)).astype(np.float16)
    block_table = _inputs()[3]
    key16 = np.zeros((9, 16, 1, 128), dtype=np.float16)  # the kernel needs block_size % 16 == 0
    key16[:, :4] = key
    table16 = np.where(block_table >= 0, block_table, 0).astype(np.int32)
    lengths_k = np.array([16 * 5 + 3, 6], dtype=np.int32)
    idx, val = lightning_indexer(query, key16, weights, actual_seq_lengths_query=_LENGTHS_Q,
                                 actual_seq_lengths_key=lengths_k, block_table=table16, sparse_count=_K,
                                 return_value=True, backend="emu")
    f32 = (query.astype(np.float32), key16.astype(np.float32), weights.astype(np.float32))
    want_idx, want_val = reference.lightning_indexer(*f32, _LENGTHS_Q, lengths_k, table16, sparse_count=_K)
    if not np.allclose(np.asarray(val), want_val, rtol=1e-4, atol=1e-3):
        raise AssertionError("sparse_values differ from the reference")
    with np.errstate(invalid="ignore"):  # -inf - -inf in the -1 tails
        gaps = np.nan_to_num(np.abs(np.diff(want_val, axis=-1)), nan=np.inf)
    separated = np.concatenate([gaps > 1e-2, np.ones(want_val.shape[:-1] + (1,), bool)], axis=-1)
    separated &= np.concatenate([np.ones(want_val.shape[:-1] + (1,), bool), gaps > 1e-2], axis=-1)
    if not np.array_equal(np.asarray(idx)[separated], want_idx[separated]):
        raise AssertionError("sparse_indices differ from the reference")


def _torch(compiled: bool):
    def run() -> None:
        from ascend_ops.common.loader import load_native

        load_native("ascend_ops.lightning_indexer", "torch")  # a clear error if not built
        import torch

        query, key, weights, block_table = _inputs()

        def call(q, k, w, lq, lk, bt):
            return torch.ops.ascend_ops.lightning_indexer(q, k, w, actual_seq_lengths_query=lq,
                                                          actual_seq_lengths_key=lk, block_table=bt,
                                                          sparse_count=_K, return_value=True)

        fn = torch.compile(call, fullgraph=True) if compiled else call
        idx, val = fn(*(torch.from_numpy(a) for a in (query, key, weights, _LENGTHS_Q, _LENGTHS_K, block_table)))
        _expect(idx.numpy(), val.numpy(), query, key, weights, block_table)
    return run


def _mindspore(graph: bool):
    def run() -> None:
        from ascend_ops.common.loader import load_native

        load_native("ascend_ops.lightning_indexer", "mindspore")  # a clear error if not built
        import mindspore as ms

        from . import ms as ms_ops

        query, key, weights, block_table = _inputs()

        def call(q, k, w, lq, lk, bt):
            return ms_ops.lightning_indexer(q, k, w, lq, lk, bt, sparse_count=_K, return_value=True)

        fn = ms.jit(call) if graph else call
        idx, val = fn(*(ms.Tensor(a) for a in (query, key, weights, _LENGTHS_Q, _LENGTHS_K, block_table)))
        _expect(idx.asnumpy(), val.asnumpy(), query, key, weights, block_table)
    return run


def cases() -> List[CheckCase]:
    return front_door_cases(lambda backend: _numpy if backend == "cpu" else _emu,
                            lambda compiled, device="cpu": _torch(compiled), _mindspore, npu=False)
