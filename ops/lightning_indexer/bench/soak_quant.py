"""Soak of lightning_indexer_quant (run by `./dev soak`): a million calls through
torch.ops.ascend_ops.lightning_indexer_quant on CPU, three small decode / prefill shapes in turn,
and every 100th call a negative key scale of a visible key, which must raise ValueError. Scales
are powers of two and weights small integers, so every score is exact in float32 and the top-k
comparison with the golden reference (20 times) is exact. The RSS must not grow by 1 MiB after
the warm-up.
"""
from __future__ import annotations

import os
import sys

import numpy as np

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
import torch  # noqa: E402

from ascend_ops.devkit import soak  # noqa: E402
from ascend_ops.lightning_indexer_quant import reference, torch_ops  # noqa: E402

# (batch, S1, N1, D, act_s2 per batch, block_size, K, scale dtype)
SHAPES = [
    (2, 1, 4, 32, (40, 17), 16, 8, torch.float16),
    (1, 4, 8, 64, (70,), 16, 16, torch.float32),
    (3, 2, 2, 16, (5, 33, 64), 32, 40, torch.float16),
]


class Case:
    def __init__(self, batch, s1, n1, d, act_s2, block_size, k, scale_dtype, seed):
        g = torch.Generator().manual_seed(seed)
        blocks_per_seq = -(-max(act_s2) // block_size)
        num_blocks = batch * blocks_per_seq + 1

        def pow2(*shape):
            return torch.pow(2.0, -torch.randint(3, 9, shape, generator=g).float()).to(scale_dtype)

        self.query = torch.randint(-8, 9, (batch, s1, n1, d), generator=g, dtype=torch.int8)
        self.key = torch.randint(-8, 9, (num_blocks, block_size, 1, d), generator=g, dtype=torch.int8)
        self.weights = torch.randint(-3, 4, (batch, s1, n1), generator=g).float()
        self.qs, self.ks = pow2(batch, s1, n1), pow2(num_blocks, block_size, 1)
        self.table = torch.randperm(num_blocks, generator=g)[:batch * blocks_per_seq].view(batch, -1).to(torch.int32)
        self.bad_ks = self.ks.clone()
        self.bad_ks[self.table[0, 0], 0, 0] = -1.0  # key 0 of batch 0: visible to every row
        self.lengths_q = torch.full((batch,), s1, dtype=torch.int32)
        self.lengths_k = torch.tensor(act_s2, dtype=torch.int32)
        self.k = k

    def call(self, ks):
        return torch_ops.lightning_indexer_quant(self.query, self.key, self.weights, self.qs, ks,
                                                 actual_seq_lengths_query=self.lengths_q,
                                                 actual_seq_lengths_key=self.lengths_k, block_table=self.table,
                                                 sparse_count=self.k, return_value=True)

    def check(self):
        want_idx, want_val = reference.lightning_indexer_quant(
            self.query.numpy(), self.key.numpy(), self.weights.numpy(), self.qs.float().numpy(),
            self.ks.float().numpy(), self.lengths_q.numpy(), self.lengths_k.numpy(), self.table.numpy(),
            sparse_count=self.k)
        idx, val = self.call(self.ks)
        if not (np.array_equal(idx.numpy(), want_idx) and np.array_equal(val.numpy(), want_val.astype(np.float32))):
            raise AssertionError("lightning_indexer_quant: the top-k differs from the reference")


def make():
    cases = [Case(*shape, seed=i) for i, shape in enumerate(SHAPES)]

    step = soak.rotation(cases, valid=lambda c: c.call(c.ks), invalid=lambda c: c.call(c.bad_ks),
                         error=ValueError, what="lightning_indexer_quant: a negative key scale")

    def check() -> None:
        for case in cases:
            case.check()

    return step, check


if __name__ == "__main__":
    sys.exit(soak.main("lightning_indexer_quant", make))
