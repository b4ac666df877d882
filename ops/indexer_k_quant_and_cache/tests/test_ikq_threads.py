"""8 threads calling indexer_k_quant_and_cache at once (split and fused layouts, every k dtype),
with tiling and operator caches of 2 entries (fewer than the shapes in play, so entries are
evicted while other threads use them). Through torch on CPU and through the emulated AscendC
kernel (whose tiling goes through the shared cache): every result byte-exact against the
reference, every thread on its own caches, the cache counters consistent afterwards."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_ops.devkit.fuzzing import front_doors
from ascend_ops.devkit.stress import hammer
from ascend_ops.indexer_k_quant_and_cache import indexer_k_quant_and_cache, reference

from ikq_cases import Case, K_DTYPES, make

THREADS = 8
DOORS = front_doors("ascend_ops.indexer_k_quant_and_cache")
SPLIT = [
    Case(5, 5, 64, 32, 4, 4, padding=1),
    Case(9, 7, 128, 64, 3, 8, rank4=False, scale_dtype="float32"),
    Case(16, 16, 256, 128, 2, 16, k_pad=8),
    Case(1, 1, 128, 128, 1, 16),
]
FUSED = [Case(6, 6, 128, 128, 2, 4, layout="fused", scale_fmt="ue8m0"), Case(11, 9, 64, 32, 3, 8, layout="fused")]


def case_list(layouts):
    cases = []
    for i, case in enumerate(layouts):
        k_dtype = K_DTYPES[i % len(K_DTYPES)]
        k, cache, slots, scales, kwargs = make(case, k_dtype, np.int64 if i % 2 else np.int32, seed=i)
        want = reference.indexer_k_quant_and_cache(k, cache, slots, scales, **kwargs)
        cases.append((k_dtype, (k, cache, slots, scales), kwargs, [w for w in want if w is not None]))
    return cases


def torch_call(k_dtype, args, kwargs):
    import torch

    from ascend_ops.indexer_k_quant_and_cache import torch_ops

    k, cache, slots, scales = args
    wide = np.ascontiguousarray(k if k.flags.c_contiguous else k.base)
    tk = torch.from_numpy(wide.view(np.int16) if k_dtype == "bfloat16" else wide)
    tk = (tk.view(torch.bfloat16) if k_dtype == "bfloat16" else tk)[:, : k.shape[1]]
    outs = [torch.from_numpy(np.ascontiguousarray(cache).copy()),
            None if scales is None else torch.from_numpy(np.ascontiguousarray(scales).copy())]
    torch_ops.indexer_k_quant_and_cache(tk, outs[0], torch.from_numpy(slots), k_scale_cache=outs[1], **kwargs)
    return [o.numpy() for o in outs if o is not None]


def numpy_call(backend):
    def call(k_dtype, args, kwargs):
        k, cache, slots, scales = args
        outs = [cache.copy(), None if scales is None else scales.copy()]
        indexer_k_quant_and_cache(k, outs[0], slots, k_scale_cache=outs[1], backend=backend, order="in_order",
                                  dtype="bfloat16" if k_dtype == "bfloat16" else None, **kwargs)
        return [o for o in outs if o is not None]
    return call


def doors():
    # (call, cases, rounds, tiling lookups per call: the CPU kernel needs no tiling, the AscendC one does)
    found = []
    if "torch-cpu" in DOORS:
        found.append(pytest.param(torch_call, SPLIT + FUSED, 100, False, id="torch-cpu"))
    if "numpy-emu" in DOORS:
        found.append(pytest.param(numpy_call("emu"), SPLIT, 3, True, id="numpy-emu"))
    return found


def compare(case, got, index):
    assert len(got) == len(case[3])
    for g, w in zip(got, case[3]):
        assert np.array_equal(np.asarray(g).view(np.uint8), w.view(np.uint8)), f"case {index} differs"


@pytest.mark.parametrize("call,layouts,rounds,tiled", doors())
def test_threads_share_small_caches_and_results_stay_exact(call, layouts, rounds, tiled):
    hammer(case_list(layouts), lambda case: call(*case[:3]), compare, rounds=rounds, tiled=tiled, threads=THREADS)
