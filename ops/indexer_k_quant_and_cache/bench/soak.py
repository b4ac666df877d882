"""Soak of indexer_k_quant_and_cache (run by `./dev soak`): a million calls through
torch.ops.ascend_ops.indexer_k_quant_and_cache on CPU, three decode shapes in turn (split int8 with
float16 and float32 scales, fused fp8 ue8m0) and every 100th call an out-of-range slot that must
raise IndexError and leave the caches alone. The RSS must not grow by 1 MiB after the warm-up;
the caches are compared with the golden reference 20 times.
"""
from __future__ import annotations

import os
import sys

import numpy as np

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
import torch  # noqa: E402

from ascend_ops.devkit import soak  # noqa: E402
from ascend_ops.indexer_k_quant_and_cache import reference, torch_ops  # noqa: E402

# (tokens, D, qbs, num_blocks, block_size, k dtype, layout, scale dtype)
SHAPES = [(1, 128, 128, 4, 16, torch.bfloat16, "split", torch.float16),
          (7, 64, 32, 8, 16, torch.float16, "split", torch.float32),
          (16, 128, 128, 2, 32, torch.float32, "fused", None)]


def make_case(tokens, d, qbs, num_blocks, block_size, dtype, layout, scale_dtype, seed):
    g = torch.Generator().manual_seed(seed)
    k = torch.randn(tokens, d, generator=g).to(dtype)
    groups = d // qbs
    if layout == "fused":
        cache, scales = torch.zeros(num_blocks, block_size, d + 4 * groups, dtype=torch.uint8), None
    else:
        cache = torch.zeros(num_blocks, block_size, 1, d, dtype=torch.int8)
        scales = torch.zeros(num_blocks, block_size, 1, groups, dtype=scale_dtype)
    slots = torch.randperm(num_blocks * block_size, generator=g)[:tokens]
    slots[::3] = -1  # padding tokens
    bad = slots.clone()
    bad[-1] = num_blocks * block_size
    kwargs = dict(k_scale_cache=scales, quant_block_size=qbs, scale_fmt="ue8m0" if layout == "fused" else None)
    return (k, cache, slots), kwargs, bad


def make():
    cases = [make_case(*shape, seed=i) for i, shape in enumerate(SHAPES)]
    op = torch_ops.indexer_k_quant_and_cache
    step = soak.rotation(cases, valid=lambda c: op(*c[0], **c[1]), invalid=lambda c: op(c[0][0], c[0][1], c[2], **c[1]),
                         error=IndexError, what="indexer_k_quant_and_cache: an out-of-range slot")

    def check() -> None:
        for (k, cache, slots), kwargs, _bad in cases:
            scales = kwargs["k_scale_cache"]
            kn = k.view(torch.int16).numpy().view(np.uint16) if k.dtype == torch.bfloat16 else k.numpy()
            want = reference.indexer_k_quant_and_cache(
                kn, np.zeros_like(cache.numpy()), slots.numpy(), None if scales is None else np.zeros_like(scales.numpy()),
                quant_block_size=kwargs["quant_block_size"], scale_fmt=kwargs["scale_fmt"])
            if not np.array_equal(cache.numpy(), want[0]) or (scales is not None and
                                                               not np.array_equal(scales.numpy(), want[1])):
                raise AssertionError("indexer_k_quant_and_cache: the caches differ from the reference")

    return step, check


if __name__ == "__main__":
    sys.exit(soak.main("indexer_k_quant_and_cache", make))
