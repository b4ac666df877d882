"""Quick golden runs for `ascend-ops check`: every backend through every front door built here."""
from __future__ import annotations

from typing import List

import numpy as np

from ascend_ops.common.registry import CheckCase, front_door_cases

from . import reference

# B = 2 batches (act_q 3 and 2, act_kv 21 and 6), N1 = 4, D = 16, Dr = 4, K = 8, PA_BSND blocks
# of 4: small, odd sizes, an out-of-window index, -1 tails, a row outside its batch (act_q 2 < S1 3).
_LENGTHS_Q = np.array([3, 2], dtype=np.int32)
_LENGTHS_KV = np.array([21, 6], dtype=np.int32)
_TABLE = np.array([[3, 0, 7, 1, 5, 8], [2, 4, -1, -1, -1, -1]], dtype=np.int32)
_SCALE = 0.25


def _indices() -> np.ndarray:
    idx = np.full((2, 3, 1, 8), -1, dtype=np.int32)
    idx[0, 0, 0] = [18, 2, 20, 5, 11, 0, -1, 4]   # 20 is beyond row 0's window (19): skipped
    idx[0, 1, 0] = [0, 1, 2, 3, 4, 5, 6, 7]
    idx[0, 2, 0] = [20, 19, 9, -1, 1, 1, 1, 1]
    idx[1, 0, 0] = [4, 3, 2, 1, 0, -1, -1, -1]
    idx[1, 1, 0] = [5, 0, -1, -1, -1, -1, -1, -1]
    return idx


def _inputs(dtype, d: int, dr: int, block_size: int = 4, num_blocks: int = 9):
    rng = np.random.default_rng(0)
    q = rng.standard_normal((2, 3, 4, d)).astype(dtype)
    qr = rng.standard_normal((2, 3, 4, dr)).astype(dtype)
    k = rng.standard_normal((num_blocks, block_size, 1, d)).astype(dtype)
    kr = rng.standard_normal((num_blocks, block_size, 1, dr)).astype(dtype)
    return q, k, _indices(), qr, kr


def _expect(got, q, k, idx, qr, kr, table, unit: float) -> None:
    want = reference.sparse_flash_attention(q, k, k, idx, _SCALE, block_table=table, actual_seq_lengths_query=_LENGTHS_Q,
                                            actual_seq_lengths_kv=_LENGTHS_KV, query_rope=qr, key_rope=kr)
    bounds = reference.tolerance(q, k, k, idx, _SCALE, dtype_unit=unit, block_table=table,
                                 actual_seq_lengths_query=_LENGTHS_Q, actual_seq_lengths_kv=_LENGTHS_KV,
                                 query_rope=qr, key_rope=kr)
    out = np.asarray(got[0], dtype=np.float64)
    if not np.all(np.abs(out - want[0]) <= bounds[0] + unit * np.abs(want[0]) + 1e-30):
        raise AssertionError("attention_out differs from the reference")
    if not np.all(np.abs(np.asarray(got[1], np.float64) - want[1]) <= bounds[1] + 1e-30):
        raise AssertionError("softmax_max differs from the reference")
    if not np.all(np.abs(np.asarray(got[2], np.float64) - want[2]) <= bounds[2] * want[2] + 1e-30):
        raise AssertionError("softmax_sum differs from the reference")


def _call(fn, q, k, idx, qr, kr, table, lengths_q, lengths_kv):
    """The call every front door makes, on its own tensors."""
    return fn(q, k, k, idx, _SCALE, block_table=table, actual_seq_lengths_query=lengths_q,
              actual_seq_lengths_kv=lengths_kv, query_rope=qr, key_rope=kr, return_softmax_lse=True)


def _numpy():
    from .api import sparse_flash_attention

    q, k, idx, qr, kr = _inputs(np.float32, 16, 4)
    got = _call(sparse_flash_attention, q, k, idx, qr, kr, _TABLE, _LENGTHS_Q, _LENGTHS_KV)
    _expect(got, q, k, idx, qr, kr, _TABLE, 0.0)


def _emu():
    """The AscendC kernel through the emulator: float16, D = 512, Dr = 64, blocks of 16 (the
    kernel's limits), the same lengths, indices and block table."""
    from .api import sparse_flash_attention

    table = np.where(_TABLE >= 0, _TABLE, 0).astype(np.int32)
    q, k, idx, qr, kr = _inputs(np.float16, 512, 64, block_size=16)
    lengths_kv = np.array([16 * 5 + 3, 6], dtype=np.int32)
    got = sparse_flash_attention(q, k, k, idx, _SCALE, block_table=table, actual_seq_lengths_query=_LENGTHS_Q,
                                 actual_seq_lengths_kv=lengths_kv, query_rope=qr, key_rope=kr,
                                 return_softmax_lse=True, backend="emu")
    want = reference.sparse_flash_attention(q, k, k, idx, _SCALE, block_table=table,
                                            actual_seq_lengths_query=_LENGTHS_Q, actual_seq_lengths_kv=lengths_kv,
                                            query_rope=qr, key_rope=kr)
    bounds = reference.tolerance(q, k, k, idx, _SCALE, dtype_unit=2.0 ** -11, block_table=table,
                                 actual_seq_lengths_query=_LENGTHS_Q, actual_seq_lengths_kv=lengths_kv,
                                 query_rope=qr, key_rope=kr)
    if not np.all(np.abs(got[0].astype(np.float64) - want[0]) <= bounds[0] + 2.0 ** -11 * np.abs(want[0]) + 1e-30):
        raise AssertionError("attention_out differs from the reference")


def _torch(compiled: bool):
    def run() -> None:
        from ascend_ops.common.loader import load_native

        load_native("ascend_ops.sparse_flash_attention", "torch")  # a clear error if not built
        import torch

        q, k, idx, qr, kr = _inputs(np.float32, 16, 4)

        def call(*tensors):
            return _call(torch.ops.ascend_ops.sparse_flash_attention, *tensors)

        fn = torch.compile(call, fullgraph=True) if compiled else call
        got = fn(*(torch.from_numpy(a) for a in (q, k, idx, qr, kr, _TABLE, _LENGTHS_Q, _LENGTHS_KV)))
        _expect([t.numpy() for t in got], q, k, idx, qr, kr, _TABLE, 0.0)
    return run


def _mindspore(graph: bool):
    def run() -> None:
        from ascend_ops.common.loader import load_native

        load_native("ascend_ops.sparse_flash_attention", "mindspore")  # a clear error if not built
        import mindspore as ms

        from . import ms as ms_ops

        q, k, idx, qr, kr = _inputs(np.float32, 16, 4)

        def call(*tensors):
            return _call(ms_ops.sparse_flash_attention, *tensors)

        fn = ms.jit(call) if graph else call
        got = fn(*(ms.Tensor(a) for a in (q, k, idx, qr, kr, _TABLE, _LENGTHS_Q, _LENGTHS_KV)))
        _expect([t.asnumpy() for t in got], q, k, idx, qr, kr, _TABLE, 0.0)
    return run


def cases() -> List[CheckCase]:
    return front_door_cases(lambda backend: _numpy if backend == "cpu" else _emu,
                            lambda compiled, device="cpu": _torch(compiled), _mindspore, npu=False)
