"""8 threads calling reshape_and_cache at once (key + value and key-only, ND and NZ caches), with tiling and operator caches of 2 entries
(fewer than the shapes in play, so entries are evicted while other threads use them).

Through torch on CPU and through the emulated AscendC kernel (whose tiling goes through the
shared cache): every result bit-exact against the reference, every thread on its own caches,
and the cache counters consistent afterwards (each lookup a hit or a miss, as many lookups as
the calls make one at a time, entries = inserts - evictions <= capacity).
"""
from __future__ import annotations


import numpy as np
import pytest

from ascend_ops.devkit.fuzzing import front_doors
from ascend_ops.devkit.stress import hammer
from ascend_ops.reshape_and_cache import reference, reshape_and_cache

from rac_cases import Shape, make

THREADS = 8
DOORS = front_doors("ascend_ops.reshape_and_cache")
SHAPES = [
    Shape(5, 5, 2, 16, 16, 4, 4, padding=1),
    Shape(9, 7, 1, 8, 24, 3, 8),
    Shape(16, 16, 4, 32, 32, 2, 16, key_pad=8),
    Shape(1, 1, 2, 128, 128, 1, 16),
    Shape(12, 12, 3, 20, 12, 4, 8, padding=3),
]
DTYPES = ("float16", "bfloat16", "int8")


# The call forms cycled through the shapes: key + value ND, key-only ND, NZ, key-only NZ.
FORMS = [dict(key_only=False, nz=False), dict(key_only=True, nz=False), dict(key_only=False, nz=True),
         dict(key_only=True, nz=True)]


def case_list():
    cases = []
    for i, shape in enumerate(SHAPES):
        dtype = DTYPES[i % len(DTYPES)]
        form = FORMS[i % len(FORMS)]
        if form["nz"] and (shape.dk % 32 or shape.dv % 32):
            form = dict(form, nz=False)  # head sizes must be whole fractals (32 covers every dtype here)
        key, value, key_cache, value_cache, slots = make(shape, dtype, np.int64 if i % 2 else np.int32, seed=i)
        if form["nz"]:
            key_cache, value_cache = reference.nd_to_nz(key_cache), reference.nd_to_nz(value_cache)
        if form["key_only"]:
            value = value_cache = None
        attrs = dict(cache_mode=1 if form["nz"] else 0)
        want = reference.reshape_and_cache(key, value, key_cache, value_cache, slots, **attrs)
        cases.append((dtype, (key, value, key_cache, value_cache, slots), attrs, [w for w in want if w is not None]))
    return cases




def torch_call(dtype, args, attrs):
    import torch

    from ascend_ops.reshape_and_cache import torch_ops

    def tensor(a, copy):
        if a is None:
            return None
        t = torch.from_numpy(a.copy() if copy else a)
        return t.view(torch.bfloat16) if dtype == "bfloat16" else t

    key, value, key_cache, value_cache, slots = args
    caches = [tensor(key_cache, True), tensor(value_cache, True)]
    torch_ops.reshape_and_cache(tensor(key, False), tensor(value, False), *caches, torch.from_numpy(slots), **attrs)
    return [c.view(torch.int16).numpy() if dtype == "bfloat16" else c.numpy() for c in caches if c is not None]


def numpy_call(backend):
    def call(dtype, args, attrs):
        key, value, key_cache, value_cache, slots = args
        caches = [key_cache.copy(), None if value_cache is None else value_cache.copy()]
        reshape_and_cache(key, value, *caches, slots, **attrs, backend=backend, order="in_order",
                          dtype="bfloat16" if dtype == "bfloat16" else None)
        return [c for c in caches if c is not None]
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
    assert len(got) == len(case[3])
    for name, g, w in zip(("key_cache", "value_cache"), got, case[3]):
        assert np.array_equal(g.view(np.uint8), w.view(np.uint8)), f"{name} of case {index} differs"


@pytest.mark.parametrize("call,rounds,tiled", doors())
def test_threads_share_small_caches_and_results_stay_exact(call, rounds, tiled):
    hammer(case_list(), lambda case: call(*case[:3]), compare, rounds=rounds, tiled=tiled, threads=THREADS)
