"""Soak of reshape_and_cache (run by `./dev soak`): a million calls through
torch.ops.ascend_ops.reshape_and_cache on CPU, three decode shapes in turn and every 100th call
an out-of-range slot that must raise IndexError and leave the caches alone. The RSS must not
grow by 1 MiB after the warm-up; the caches are compared with the golden reference 20 times.
"""
from __future__ import annotations

import os
import sys

import numpy as np

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
import torch  # noqa: E402

from ascend_ops.devkit import soak  # noqa: E402
from ascend_ops.reshape_and_cache import reference, torch_ops  # noqa: E402

# (tokens, heads, head_size, num_blocks, block_size, dtype)
SHAPES = [(1, 2, 16, 4, 16, torch.float16), (7, 4, 32, 8, 16, torch.bfloat16), (16, 1, 8, 2, 32, torch.int8)]


def make_case(tokens, heads, head_size, num_blocks, block_size, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    key = torch.randint(-100, 100, (tokens, heads, head_size), generator=g).to(dtype)
    value = torch.randint(-100, 100, (tokens, heads, head_size), generator=g).to(dtype)
    key_cache = torch.zeros(num_blocks, block_size, heads, head_size, dtype=dtype)
    value_cache = torch.zeros_like(key_cache)
    slots = torch.randperm(num_blocks * block_size, generator=g)[:tokens]
    slots[::3] = -1  # padding tokens
    bad = slots.clone()
    bad[-1] = num_blocks * block_size
    return (key, value, key_cache, value_cache, slots), bad


def as_numpy(t: torch.Tensor) -> np.ndarray:
    return t.view(torch.int16).numpy() if t.dtype == torch.bfloat16 else t.numpy()


def make():
    cases = [make_case(*shape, seed=i) for i, shape in enumerate(SHAPES)]

    step = soak.rotation(cases, valid=lambda c: torch_ops.reshape_and_cache(*c[0]),
                         invalid=lambda c: torch_ops.reshape_and_cache(*c[0][:4], c[1]), error=IndexError,
                         what="reshape_and_cache: an out-of-range slot")

    def check() -> None:
        for args, _bad in cases:
            key, value, key_cache, value_cache, slots = (as_numpy(a) for a in args)
            want_key, want_value = reference.reshape_and_cache(key, value, np.zeros_like(key_cache),
                                                               np.zeros_like(value_cache), slots)
            if not (np.array_equal(key_cache, want_key) and np.array_equal(value_cache, want_value)):
                raise AssertionError("reshape_and_cache: the caches differ from the reference")

    return step, check


if __name__ == "__main__":
    sys.exit(soak.main("reshape_and_cache", make))
