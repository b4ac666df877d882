"""8 threads calling advance_step_flashattn at once, with tiling and operator caches of 2
entries (fewer than the shapes in play, so entries are evicted while other threads use them).

Through torch on CPU and through the emulated AscendC kernel (whose tiling goes through the
shared cache): every output exact against the reference, every thread on its own outputs, and
the cache counters consistent afterwards (each lookup a hit or a miss, as many lookups as the
calls make one at a time, entries = inserts - evictions <= capacity).
"""
from __future__ import annotations


import numpy as np
import pytest

from ascend_ops.adv_step_flash import advance_step_flashattn, reference
from ascend_ops.devkit.fuzzing import front_doors
from ascend_ops.devkit.stress import hammer

from asf_cases import ALL32, ALL64, NAMES, OUTPUTS, VLLM, Case, make

THREADS = 8
DOORS = front_doors("ascend_ops.adv_step_flash")
SHAPES = [
    (Case(1, 1, 16), VLLM),
    (Case(7, 5, 16, table_pad=3), ALL32),
    (Case(64, 50, 128, sampled_2d=False, table_pad=128), ALL64),
    (Case(9, 6, 1, span=40), VLLM),
    (Case(8, 8, 128, pos_base=3 * 2**24 + 1, span=300, block_base=2**24 // 128), ALL64),
]


def case_list():
    cases = []
    for i, (case, combo) in enumerate(SHAPES):
        arrays = make(case, combo, seed=i)
        counts = (case.num_seqs, case.num_queries, case.block_size)
        want = reference.advance_step_flashattn(*counts, *(arrays[n].copy() for n in NAMES))
        cases.append((counts, arrays, want))
    return cases




def torch_call(counts, arrays):
    import torch

    from ascend_ops.adv_step_flash import torch_ops

    own = {n: arrays[n].copy() if n in OUTPUTS else arrays[n] for n in NAMES}
    torch_ops.advance_step_flashattn(*counts, *(torch.from_numpy(own[n]) for n in NAMES))
    return own


def numpy_call(backend):
    def call(counts, arrays):
        own = {n: arrays[n].copy() if n in OUTPUTS else arrays[n] for n in NAMES}
        advance_step_flashattn(*counts, *(own[n] for n in NAMES), backend=backend, order="in_order")
        return own
    return call


def doors():
    # (call, rounds, tiling lookups per call: the CPU kernel needs no tiling, the AscendC one does)
    found = []
    if "torch-cpu" in DOORS:
        found.append(pytest.param(torch_call, 200, False, id="torch-cpu"))
    if "numpy-emu" in DOORS:
        found.append(pytest.param(numpy_call("emu"), 3, True, id="numpy-emu"))
    return found


def compare(case, got, index):
    for name in OUTPUTS:
        assert np.array_equal(got[name], case[2][name]), f"{name} of case {index} differs"


@pytest.mark.parametrize("call,rounds,tiled", doors())
def test_threads_share_small_caches_and_results_stay_exact(call, rounds, tiled):
    hammer(case_list(), lambda case: call(*case[:2]), compare, rounds=rounds, tiled=tiled, threads=THREADS)
