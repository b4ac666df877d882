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
    query = rng.integers(-127, 128, (2, 3, 4, 16), dtype=np.int8)
    key = rng.integers(-127, 128, (9, 4, 1, 16), dtype=np.int8)
    weights = rng.standard_normal((2, 3, 4)).astype(np.float32)
    qs = rng.uniform(0.001, 0.02, (2, 3, 4)).astype(np.float32)
    ks = rng.uniform(0.001, 0.02, (9, 4, 1)).astype(np.float32)
    block_table = np.array([[3, 0, 7, 1, 5, 8], [2, 4, -1, -1, -1, -1]], dtype=np.int32)
    return query, key, weights, qs, ks, block_table


def _expect(got_idx, got_val, inputs) -> None:
    want_idx, want_val = reference.lightning_indexer_quant(*inputs[:5], _LENGTHS_Q, _LENGTHS_K, inputs[5],
                                                           sparse_count=_K)
    if not np.array_equal(np.asarray(got_idx), want_idx):
        raise AssertionError("sparse_indices differ from the reference")
    if not np.allclose(np.asarray(got_val), want_val, rtol=1e-5, atol=1e-5):
        raise AssertionError("sparse_values differ from the reference")


def _numpy():
    from .api import lightning_indexer_quant

    inputs = _inputs()
    idx, val = lightning_indexer_quant(*inputs[:5], actual_seq_lengths_query=_LENGTHS_Q,
                                       actual_seq_lengths_key=_LENGTHS_K, block_table=inputs[5], sparse_count=_K,
                                       return_value=True)
    _expect(idx, val, inputs)


def _emu():
    """The AscendC kernel through the emulator: D = 128, float16 weights and scales (the kernel's
    limits), blocks of 16, the same lengths; indices and values equal the reference of the spec's
    NPU numerics (float16 intermediates) exactly."""
    from .api import lightning_indexer_quant

    rng = np.random.default_rng(1)
    query = rng.integers(-127, 128, (2, 3, 4, 128), dtype=np.int8)
    key = rng.integers(-127, 128, (9, 16, 1, 128), dtype=np.int8)
    weights = rng.standard_normal((2, 3, 4)).astype(np.float16)
    qs = rng.uniform(0.001, 0.02, (2, 3, 4)).astype(np.float16)
    ks = rng.uniform(0.001, 0.02, (9, 16, 1)).astype(np.float16)
    table = np.array([[3, 0, 7, 1, 5, 8], [2, 4, 0, 0, 0, 0]], dtype=np.int32)
    lengths_k = np.array([16 * 5 + 3, 6], dtype=np.int32)
    idx, val = lightning_indexer_quant(query, key, weights, qs, ks, actual_seq_lengths_query=_LENGTHS_Q,
                                       actual_seq_lengths_key=lengths_k, block_table=table, sparse_count=_K,
                                       return_value=True, backend="emu")
    want_idx = np.full(idx.shape, -1, dtype=np.int32)
    want_val = np.full(val.shape, -np.inf, dtype=np.float32)
    for row in reference.rows(query, key, weights, qs, ks, _LENGTHS_Q, lengths_k, table, numerics="npu"):
        order = np.lexsort((np.arange(len(row.scores)), -row.scores))[:_K]
        want_idx[row.out][:len(order)] = order
        want_val[row.out][:len(order)] = row.scores[order]
    if not np.array_equal(np.asarray(idx), want_idx):
        raise AssertionError("sparse_indices differ from the reference (NPU numerics)")
    if not np.array_equal(np.asarray(val), want_val):
        raise AssertionError("sparse_values differ from the reference (NPU numerics)")


def _torch(compiled: bool):
    def run() -> None:
        from ascend_ops.common.loader import load_native

        load_native("ascend_ops.lightning_indexer_quant", "torch")  # a clear error if not built
        import torch

        inputs = _inputs()

        def call(q, k, w, qs, ks, lq, lk, bt):
            return torch.ops.ascend_ops.lightning_indexer_quant(q, k, w, qs, ks, actual_seq_lengths_query=lq,
                                                                actual_seq_lengths_key=lk, block_table=bt,
                                                                sparse_count=_K, return_value=True)

        fn = torch.compile(call, fullgraph=True) if compiled else call
        idx, val = fn(*(torch.from_numpy(a) for a in inputs[:5] + (_LENGTHS_Q, _LENGTHS_K, inputs[5])))
        _expect(idx.numpy(), val.numpy(), inputs)
    return run


def _mindspore(graph: bool):
    def run() -> None:
        from ascend_ops.common.loader import load_native

        load_native("ascend_ops.lightning_indexer_quant", "mindspore")  # a clear error if not built
        import mindspore as ms

        from . import ms as ms_ops

        inputs = _inputs()

        def call(q, k, w, qs, ks, lq, lk, bt):
            return ms_ops.lightning_indexer_quant(q, k, w, qs, ks, lq, lk, bt, sparse_count=_K, return_value=True)

        fn = ms.jit(call) if graph else call
        idx, val = fn(*(ms.Tensor(a) for a in inputs[:5] + (_LENGTHS_Q, _LENGTHS_K, inputs[5])))
        _expect(idx.asnumpy(), val.asnumpy(), inputs)
    return run


def cases() -> List[CheckCase]:
    return front_door_cases(lambda backend: _numpy if backend == "cpu" else _emu,
                            lambda compiled, device="cpu": _torch(compiled), _mindspore, npu=False)
