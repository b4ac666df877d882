"""Soak of sparse_flash_attention (run by `./dev soak`): a million calls through
torch.ops.ascend_ops.sparse_flash_attention on CPU, three small shapes in turn (a bfloat16 decode
on the AVX512_BF16 path where the CPU has it, a float16 prefill and a float32 decode with
sparse_block_size 2 on the float32 tile path), and every 100th call a block id past the cache
that must raise IndexError. The outputs are compared with the float64 reference within the
contract's bounds 20 times. The RSS must not grow by 1 MiB after the warm-up.
"""
from __future__ import annotations

import os
import sys

import numpy as np

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
# Threads that finish a parallel region sleep instead of spinning (as in bench/run.py): with
# spinning OpenMP workers on shared cores these small calls took 1-24 ms instead of 50-200 us.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
import torch  # noqa: E402

from ascend_ops.devkit import soak  # noqa: E402
from ascend_ops.sparse_flash_attention import reference, torch_ops  # noqa: E402

UNIT = {torch.bfloat16: 2.0**-8, torch.float16: 2.0**-11, torch.float32: 0.0}
# (batch, S1, N1, D, Dr, act_kv per batch, block_size, K, sbs, dtype)
SHAPES = [
    (4, 1, 16, 64, 16, (40, 17, 64, 33), 16, 16, 1, torch.bfloat16),
    (1, 4, 8, 32, 8, (70,), 16, 24, 1, torch.float16),
    (2, 1, 4, 16, 4, (33, 64), 32, 8, 2, torch.float32),
]


class Case:
    def __init__(self, batch, s1, n1, d, dr, act_kv, block_size, k, sbs, dtype, seed):
        g = torch.Generator().manual_seed(seed)
        blocks_per_seq = -(-max(act_kv) // block_size)
        num_blocks = batch * blocks_per_seq + 1

        def randn(*shape):
            return torch.randn(*shape, generator=g).to(dtype)

        self.query, self.query_rope = randn(batch, s1, n1, d), randn(batch, s1, n1, dr)
        self.key, self.key_rope = randn(num_blocks, block_size, 1, d), randn(num_blocks, block_size, 1, dr)
        self.table = torch.randperm(num_blocks, generator=g)[:batch * blocks_per_seq].view(batch, -1).to(torch.int32)
        self.bad_table = self.table.clone()
        self.bad_table[-1, 0] = num_blocks
        self.lengths_kv = torch.tensor(act_kv, dtype=torch.int32)
        idx = torch.full((batch, s1, 1, k), -1, dtype=torch.int32)
        for b, n in enumerate(act_kv):
            for r in range(s1):
                visible = -(-(n - s1 + r + 1) // sbs)  # sparse_mode 3: blocks of the row's window
                if visible > 0:
                    take = min(k, visible)
                    idx[b, r, 0, :take] = torch.randperm(visible, generator=g)[:take].to(torch.int32)
        self.indices, self.sbs, self.dtype = idx, sbs, dtype
        self.scale = 1.0 / float(np.sqrt(d + dr))

    def call(self, table):
        return torch_ops.sparse_flash_attention(
            self.query, self.key, self.key, self.indices, self.scale, block_table=table,
            actual_seq_lengths_kv=self.lengths_kv, query_rope=self.query_rope, key_rope=self.key_rope,
            sparse_block_size=self.sbs, return_softmax_lse=True)

    def check(self):
        f64 = {n: getattr(self, n).double().numpy() for n in ("query", "key", "query_rope", "key_rope")}
        kw = dict(block_table=self.table.numpy(), actual_seq_lengths_kv=self.lengths_kv.numpy(),
                  query_rope=f64["query_rope"], key_rope=f64["key_rope"], sparse_block_size=self.sbs)
        args = (f64["query"], f64["key"], f64["key"], self.indices.numpy(), self.scale)
        want = reference.sparse_flash_attention(*args, **kw)
        out_b, max_b, sum_b = reference.tolerance(*args, dtype_unit=UNIT[self.dtype], **kw)
        out, m, l = (t.double().numpy() for t in self.call(self.table))
        u = UNIT[self.dtype]
        if not (np.all(np.abs(out - want[0]) <= out_b + u * np.abs(want[0]) + 1e-12)
                and np.all(np.abs(m - want[1]) <= max_b + 1e-12)
                and np.all(np.abs(l - want[2]) <= sum_b * np.abs(want[2]) + 1e-12)):
            raise AssertionError("sparse_flash_attention: the output differs from the reference beyond the contract")


def make():
    cases = [Case(*shape, seed=i) for i, shape in enumerate(SHAPES)]

    step = soak.rotation(cases, valid=lambda c: c.call(c.table), invalid=lambda c: c.call(c.bad_table),
                         error=IndexError, what="sparse_flash_attention: a block id past the cache")

    def check() -> None:
        for case in cases:
            case.check()

    return step, check


if __name__ == "__main__":
    sys.exit(soak.main("sparse_flash_attention", make))
