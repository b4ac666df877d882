"""Soak of lightning_indexer (run by `./dev soak`): a million calls through
torch.ops.ascend_ops.lightning_indexer on CPU, three small decode / prefill shapes in turn, and
every 100th call a block id past the key cache that must raise IndexError. Inputs are small
integers, so every score is exact in float32 and the top-k comparison with the golden
reference (20 times) is exact. The RSS must not grow by 1 MiB after the warm-up.
"""
from __future__ import annotations

import os
import sys

import numpy as np

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
import torch  # noqa: E402

from ascend_ops.devkit import soak  # noqa: E402
from ascend_ops.lightning_indexer import reference, torch_ops  # noqa: E402

# (batch, S1, N1, D, act_s2 per batch, block_size, K, dtype)
SHAPES = [
    (2, 1, 4, 32, (40, 17), 16, 8, torch.float16),
    (1, 4, 8, 64, (70,), 16, 16, torch.bfloat16),
    (3, 2, 2, 16, (5, 33, 64), 32, 40, torch.float32),
]


class Case:
    def __init__(self, batch, s1, n1, d, act_s2, block_size, k, dtype, seed):
        g = torch.Generator().manual_seed(seed)
        blocks_per_seq = -(-max(act_s2) // block_size)
        num_blocks = batch * blocks_per_seq + 1

        def small_ints(*shape):
            return torch.randint(-3, 4, shape, generator=g).to(dtype)

        self.query, self.weights = small_ints(batch, s1, n1, d), small_ints(batch, s1, n1)
        self.key = small_ints(num_blocks, block_size, 1, d)
        self.table = torch.randperm(num_blocks, generator=g)[:batch * blocks_per_seq].view(batch, -1).to(torch.int32)
        self.bad_table = self.table.clone()
        self.bad_table[-1, 0] = num_blocks
        self.lengths_q = torch.full((batch,), s1, dtype=torch.int32)
        self.lengths_k = torch.tensor(act_s2, dtype=torch.int32)
        self.k = k

    def call(self, table):
        return torch_ops.lightning_indexer(self.query, self.key, self.weights, actual_seq_lengths_query=self.lengths_q,
                                           actual_seq_lengths_key=self.lengths_k, block_table=table,
                                           sparse_count=self.k, return_value=True)

    def check(self):
        f32 = (t.float().numpy() for t in (self.query, self.key, self.weights))
        want_idx, want_val = reference.lightning_indexer(*f32, self.lengths_q.numpy(), self.lengths_k.numpy(),
                                                         self.table.numpy(), sparse_count=self.k)
        idx, val = self.call(self.table)
        if not (np.array_equal(idx.numpy(), want_idx) and np.array_equal(val.numpy(), want_val.astype(np.float32))):
            raise AssertionError("lightning_indexer: the top-k differs from the reference")


def make():
    cases = [Case(*shape, seed=i) for i, shape in enumerate(SHAPES)]

    step = soak.rotation(cases, valid=lambda c: c.call(c.table), invalid=lambda c: c.call(c.bad_table),
                         error=IndexError, what="lightning_indexer: a block id past the key cache")

    def check() -> None:
        for case in cases:
            case.check()

    return step, check


if __name__ == "__main__":
    sys.exit(soak.main("lightning_indexer", make))
