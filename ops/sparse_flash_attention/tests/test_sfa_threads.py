"""8 threads calling sparse_flash_attention at once, with tiling and operator caches of 2
entries (fewer than the shapes in play, so entries are evicted while other threads use them).

Through torch on CPU and through the emulated AscendC kernel (its tiling is cached): every
result must equal, bit for bit, the same call made alone (which is held to the reference);
afterwards the cache counters must be consistent (ascend_ops.devkit.stress.hammer).
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_ops.devkit.fuzzing import front_doors
from ascend_ops.devkit.stress import hammer
from ascend_ops.sparse_flash_attention import sparse_flash_attention

from sfa_cases import Shape, assert_matches, make, to_torch, torch_to_numpy

THREADS = 8
DOORS = front_doors("ascend_ops.sparse_flash_attention")
CPU_SHAPES = [Shape((1, 1), (40, 17), 4, 32, 8, 8), Shape((4,), (70,), 8, 16, 4, 16, sbs=2),
              Shape((2, 2, 2), (5, 33, 64), 4, 24, 8, 40), Shape((1,), (200,), 16, 64, 16, 64)]
# The AscendC kernel's limits: D = 512, Dr = 64, block_size a multiple of 16.
EMU_SHAPES = [Shape((1, 1), (40, 17), 4, 512, 64, 8), Shape((2,), (70,), 8, 512, 64, 16, sbs=2),
              Shape((1, 2), (33, 64), 2, 512, 64, 24, block_size=32)]


def cases(shapes, dtypes):
    out = []
    for i, shape in enumerate(shapes):
        dtype = dtypes[i % len(dtypes)]
        args = make(shape, "BSND" if i % 2 else "TND", "PA_BSND", dtype, seed=i)
        out.append([dtype, args, None])
    return out


def torch_call(case):
    import torch

    from ascend_ops.sparse_flash_attention import torch_ops

    _, args, _ = case
    with torch.no_grad():
        return [torch_to_numpy(t) for t in torch_ops.sparse_flash_attention(**to_torch(args), return_softmax_lse=True)]


def emu_call(case):
    _, args, _ = case
    return sparse_flash_attention(**args, return_softmax_lse=True, backend="emu")


def doors():
    found = []
    if "torch-cpu" in DOORS:
        found.append(pytest.param(torch_call, cases(CPU_SHAPES, ["bfloat16", "float32", "float16"]), 30, False,
                                  id="torch-cpu"))
    if "numpy-emu" in DOORS:
        found.append(pytest.param(emu_call, cases(EMU_SHAPES, ["bfloat16", "float16"]), 1, True, id="numpy-emu"))
    return found


def compare(case, got, index):
    for g, w in zip(got, case[2]):
        assert np.array_equal(np.asarray(g).view(np.uint8), np.asarray(w).view(np.uint8)), f"case {index} differs"


@pytest.mark.parametrize("call,case_list,rounds,tiled", doors())
def test_threads_share_small_caches_and_results_stay_exact(call, case_list, rounds, tiled):
    for case in case_list:  # the result alone, held to the reference
        dtype, args, _ = case
        case[2] = call(case)
        assert_matches(case[2], args, dtype, 3)
    hammer(case_list, call, compare, rounds=rounds, tiled=tiled, threads=THREADS)
