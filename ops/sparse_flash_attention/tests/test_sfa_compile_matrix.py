"""sparse_flash_attention under torch.compile the way engines call it: the backends, shape modes
and layouts of ascend_ops.devkit.compile_matrix, applied to the paged latent cache the op reads
(it writes nothing in place): one [2, num_blocks, block_size, 1, D] allocation whose first half
is key (value = key), taken as a separate tensor, by index, unbind or a slice (a storage offset),
inside or outside the compiled region. Each step's outputs equal eager's, bit for bit, and the
cache is left as it was.
"""
from __future__ import annotations

import importlib.util
import os

import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("torch is not installed: the PyTorch adapter cannot be tested", allow_module_level=True)

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
import ascend_ops.sparse_flash_attention  # noqa: E402,F401  (registers the torch op: torch is imported below)
import torch  # noqa: E402

from ascend_ops.devkit import compile_matrix as cm  # noqa: E402

N1, D, DR, BLOCK, BLOCKS, K = 4, 32, 8, 8, 10, 6


def step(seed: int, batch: int):
    """(fused cache [2, BLOCKS, BLOCK, 1, D], the other arguments) of one decode step. Block ids
    avoid block 0, so the ``slice`` layout (cache[i, 1:], one block less) reads the same rows
    through ids shifted down by one."""
    gen = torch.Generator().manual_seed(seed)
    fused = torch.randn(2, BLOCKS, BLOCK, 1, D, generator=gen).to(torch.bfloat16)
    rope = torch.randn(BLOCKS, BLOCK, 1, DR, generator=gen).to(torch.bfloat16)
    query = torch.randn(batch, 1, N1, D, generator=gen).to(torch.bfloat16)
    query_rope = torch.randn(batch, 1, N1, DR, generator=gen).to(torch.bfloat16)
    lengths = torch.randint(1, 3 * BLOCK, (batch,), generator=gen, dtype=torch.int32)
    table = torch.stack([torch.randperm(BLOCKS - 1, generator=gen)[:3] + 1 for _ in range(batch)]).to(torch.int32)
    indices = torch.stack([torch.randperm(3 * BLOCK, generator=gen)[:K] for _ in range(batch)]).to(torch.int32)
    return fused, (rope, query, query_rope, lengths, table, indices.view(batch, 1, 1, K))


def attend(caches, rope, query, query_rope, lengths, table, indices):
    key = caches[0]
    offset = BLOCKS - key.shape[0]  # 1 for the slice layout
    return torch.ops.ascend_ops.sparse_flash_attention(
        query, key, key, indices, 0.125, block_table=table - offset, actual_seq_lengths_kv=lengths,
        query_rope=query_rope, key_rope=rope[offset:], return_softmax_lse=True)


CASES = cm.case_ids()


@pytest.mark.parametrize("backend,mode,layout", CASES, ids=[f"{b}-{m}-{lay.name}" for b, m, lay in CASES])
def test_compiled_step_equals_eager(backend, mode, layout):
    torch._dynamo.reset()
    if layout.inside:
        def fn(fused, args):
            return attend(cm.views(fused, layout.how), *args)
    else:
        def fn(caches, args):
            return attend(list(caches), *args)
    compiled = torch.compile(fn, backend=backend, fullgraph=True,
                             dynamic={"static": False, "dynamic": True, "mark_dynamic": None}[mode])
    for fused, args in (step(0, 3), step(1, 5)):
        want = attend(cm.views(fused.clone(), layout.how), *args)
        before = fused.clone()
        if mode == "mark_dynamic":
            for a in args:
                torch._dynamo.mark_dynamic(a, 0)
        got = compiled(fused if layout.inside else tuple(cm.views(fused, layout.how)), tuple(args))
        for g, w in zip(got, want):
            assert torch.equal(g, w), f"{backend}/{mode}/{layout.name}: compiled outputs differ from eager"
        assert torch.equal(fused, before), "the op wrote into the cache"
