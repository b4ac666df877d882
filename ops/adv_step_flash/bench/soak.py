"""Soak of adv_step_flash (run by `./dev soak`): a million calls through
torch.ops.ascend_ops.advance_step_flashattn on CPU, three batch shapes in turn (seq_lens
restored before each call, so every call does the same step), and every 100th call a
seq_len past the block table that must raise IndexError and leave the outputs alone. The
RSS must not grow by 1 MiB after the warm-up; the outputs are compared with the golden
reference 20 times.
"""
from __future__ import annotations

import os
import sys

import numpy as np

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
import torch  # noqa: E402

from ascend_ops.adv_step_flash import reference, torch_ops  # noqa: E402
from ascend_ops.devkit import soak  # noqa: E402

# (num_seqs, num_queries, block_size, max_blocks, index dtype)
SHAPES = [(1, 1, 16, 4, torch.int64), (8, 6, 16, 8, torch.int32), (64, 64, 128, 3, torch.int64)]


class Case:
    def __init__(self, num_seqs, num_queries, block_size, max_blocks, dtype, seed):
        g = torch.Generator().manual_seed(seed)
        self.counts = (num_seqs, num_queries, block_size)
        self.sampled = torch.randint(0, 32000, (num_queries, 1), generator=g).to(dtype)
        self.tables = torch.randint(0, 1000, (num_seqs, max_blocks), generator=g).to(torch.int32)
        self.initial_lens = torch.randint(0, max_blocks * block_size, (num_seqs,), generator=g).to(torch.int32)
        self.bad_lens = self.initial_lens.clone()
        self.bad_lens[0] = max_blocks * block_size  # pos // block_size == max_blocks
        self.seq_lens = self.initial_lens.clone()
        self.outputs = [torch.zeros(num_seqs, dtype=dtype) for _ in range(3)]  # tokens, positions, slots

    def call(self, seq_lens):
        tokens, positions, slots = self.outputs
        torch_ops.advance_step_flashattn(*self.counts, tokens, self.sampled, positions, seq_lens, slots,
                                         self.tables)

    def check(self):
        tokens, positions, slots = (np.zeros(t.shape, t.numpy().dtype) for t in self.outputs)
        lens = self.initial_lens.numpy().copy()
        want = reference.advance_step_flashattn(*self.counts, tokens, self.sampled.numpy(), positions, lens,
                                                slots, self.tables.numpy())
        got = dict(zip(("input_tokens", "input_positions", "slot_mapping"), (t.numpy() for t in self.outputs)),
                   seq_lens=self.seq_lens.numpy())
        for name, value in got.items():
            if not np.array_equal(value, want[name]):
                raise AssertionError(f"advance_step_flashattn: {name} differs from the reference")


def make():
    cases = [Case(*shape, seed=i) for i, shape in enumerate(SHAPES)]

    def valid(case):
        case.seq_lens.copy_(case.initial_lens)
        case.call(case.seq_lens)

    step = soak.rotation(cases, valid=valid, invalid=lambda c: c.call(c.bad_lens), error=IndexError,
                         what="advance_step_flashattn: a seq_len past the block table")

    def check() -> None:
        for case in cases:
            case.check()

    return step, check


if __name__ == "__main__":
    sys.exit(soak.main("adv_step_flash", make))
