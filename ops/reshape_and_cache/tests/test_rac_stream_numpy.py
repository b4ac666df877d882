"""The CPU kernel's two store paths (streaming stores into caches larger than the last-level
cache, ordinary stores otherwise: common's ascend_ops/cpu_stream.hpp) byte-exact on every ISA
build. Each (ASCEND_OPS_CPU_STREAM, ASCEND_OPS_CPU_ISA) pair runs in its own process (both are read
once per process), with "always" forcing the streaming path on the small caches tests can afford.
Cases: every cache view layout (strided halves, HND permutation, block gaps, head-major, NZ, vLLM
paged), rows that are not a multiple of 64 bytes, cache views that start off a 64-byte (and off an
element) boundary, duplicate slots, the quantising modes, and a write large enough to run on two
threads. Golden: the reference; the whole allocation compared byte for byte (guards included)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from ascend_ops.devkit.testing import random_array
from ascend_ops.reshape_and_cache import reference, reshape_and_cache

from rac_views import expected, layouts

NB, BS = 6, 8


def _kw(dtype):
    return {"dtype": "bfloat16"} if dtype == "bfloat16" else {}


def check_layouts() -> int:
    """Every view layout, head sizes whose rows are and are not whole 64-byte lines."""
    n = 0
    for dtype in ("float16", "bfloat16", "float32", "int8"):
        for h, d in ((3, 128), (3, 40), (2, 96)):
            for name, (mode, shape, views) in layouts(NB, BS, h, d, dtype).items():
                rng = np.random.default_rng(n)
                base = random_array(shape, dtype, rng)
                key = random_array((21, h, d), dtype, rng)
                value = random_array((21, h, d), dtype, rng)
                slots = rng.permutation(NB * BS)[:21].astype(np.int64)
                slots[4] = -1
                want = expected(base, views, mode, key, value, slots)
                kc, vc = views(base)
                reshape_and_cache(key, value, kc, vc, slots, cache_mode=mode, backend="cpu", **_kw(dtype))
                assert np.array_equal(base.view(np.uint8), want.view(np.uint8)), (dtype, h, d, name)
                n += 1
    return n


def check_misaligned() -> int:
    """Caches starting 2..62 bytes past a 64-byte boundary (float16: off an element too, 1 byte)
    inside a guarded byte buffer: rows straddle lines, head and tail take ordinary stores."""
    n = 0
    for dtype, offsets in (("float16", (2, 30, 62)), ("int8", (1, 33)), ("float32", (4, 20))):
        item = np.dtype(dtype).itemsize
        h, d = 2, 72
        cache_elems = NB * BS * h * d
        for offset in offsets:
            rng = np.random.default_rng(offset)
            raw = rng.integers(0, 256, 64 + 2 * cache_elems * item + 128, dtype=np.uint8)
            start = 64 - raw.ctypes.data % 64 + offset
            want = raw.copy()
            key = random_array((13, h, d), dtype, rng)
            value = random_array((13, h, d), dtype, rng)
            slots = rng.permutation(NB * BS)[:13].astype(np.int32)

            def caches(buf):
                body = buf[start:start + 2 * cache_elems * item].view(dtype)
                return body[:cache_elems].reshape(NB, BS, h, d), body[cache_elems:].reshape(NB, BS, h, d)

            wk, wv = caches(want)
            new_k, new_v = reference.reshape_and_cache(key, value, wk, wv, slots)
            wk[...], wv[...] = new_k, new_v
            kc, vc = caches(raw)
            assert kc.ctypes.data % 64 == offset
            reshape_and_cache(key, value, kc, vc, slots, backend="cpu")
            assert np.array_equal(raw, want), (dtype, offset)
            n += 1
    return n


def check_duplicates() -> int:
    """Duplicate slots (a caller error: which token wins is not promised): every row written is
    whole, one of its tokens' rows, and every other byte is the reference's."""
    rng = np.random.default_rng(3)
    h, d = 4, 64
    key = random_array((12, h, d), "float16", rng)
    value = random_array((12, h, d), "float16", rng)
    slots = np.array([5, 9, 5, 17, 9, 5, -1, 30, 31, 30, 2, 3], np.int64)
    kc = random_array((NB, BS, h, d), "float16", rng)
    vc = random_array((NB, BS, h, d), "float16", rng)
    unique = slots.copy()
    unique[[2, 4, 5, 9]] = -1  # the reference writes the rest; the duplicated slots are checked below
    want_k, want_v = reference.reshape_and_cache(key, value, kc.copy(), vc.copy(), unique)
    reshape_and_cache(key, value, kc, vc, slots, backend="cpu")
    flat_k, flat_v = kc.reshape(-1, h, d), vc.reshape(-1, h, d)
    for s in (5, 9, 30):
        tokens = np.flatnonzero(slots == s)
        assert any(np.array_equal(flat_k[s].view(np.uint16), key[t].view(np.uint16)) and
                   np.array_equal(flat_v[s].view(np.uint16), value[t].view(np.uint16)) for t in tokens), s
        want_k.reshape(-1, h, d)[s] = flat_k[s]
        want_v.reshape(-1, h, d)[s] = flat_v[s]
    assert np.array_equal(kc.view(np.uint16), want_k.view(np.uint16))
    assert np.array_equal(vc.view(np.uint16), want_v.view(np.uint16))
    return 1


def check_quantised() -> int:
    """int8 with per-channel scales and offsets, fp8: ND rows (codes streamed from the row
    buffer) and NZ."""
    n = 0
    for mode, cdt in (("int8", np.int8), ("fp8_e4m3", np.uint8), ("fp8_e5m2", np.uint8)):
        for h, d, cache_mode in ((3, 128, 0), (2, 40, 0), (2, 64, 1)):
            rng = np.random.default_rng(n + 50)
            key = (rng.standard_normal((19, h, d)) * 3).astype(ml_dtypes.bfloat16)
            value = (rng.standard_normal((19, h, d)) * 3).astype(ml_dtypes.bfloat16)
            shape = (NB, BS, h, d) if cache_mode == 0 else (NB, h * d // 32, BS, 32)
            kc = rng.integers(0, 256, shape, dtype=np.uint8).view(cdt)
            vc = rng.integers(0, 256, shape, dtype=np.uint8).view(cdt)
            kw = {"kv_cache_dtype": mode,
                  "k_scale": (rng.uniform(0.5, 2.0, (h, d)) / 60).astype(np.float32),
                  "v_scale": np.array(0.02, np.float32)}
            if mode == "int8":
                kw["k_offset"] = rng.uniform(-9, 9, (h, d)).astype(np.float32)
            slots = rng.permutation(NB * BS)[:19].astype(np.int64)
            slots[0] = -1
            want_k, want_v = reference.reshape_and_cache(key, value, kc.copy(), vc.copy(), slots,
                                                         cache_mode=cache_mode, **kw)
            reshape_and_cache(key, value, kc, vc, slots, cache_mode=cache_mode, backend="cpu", **kw)
            assert np.array_equal(kc.view(np.uint8), np.asarray(want_k).view(np.uint8)), (mode, h, d, cache_mode)
            assert np.array_equal(vc.view(np.uint8), np.asarray(want_v).view(np.uint8)), (mode, h, d, cache_mode)
            n += 1
    return n


def check_two_threads() -> int:
    """A write of ~1.5 MiB of rows: ranges on two threads (ASCEND_OPS_NUM_THREADS=2), each fencing
    its own streaming stores."""
    rng = np.random.default_rng(9)
    h, d, t = 8, 128, 400
    key = random_array((t, h, d), "float16", rng)
    value = random_array((t, h, d), "float16", rng)
    kc = random_array((64, 16, h, d), "float16", rng)
    vc = random_array((64, 16, h, d), "float16", rng)
    slots = rng.permutation(64 * 16)[:t].astype(np.int64)
    want_k, want_v = reference.reshape_and_cache(key, value, kc.copy(), vc.copy(), slots)
    reshape_and_cache(key, value, kc, vc, slots, backend="cpu")
    assert np.array_equal(kc.view(np.uint16), want_k.view(np.uint16))
    assert np.array_equal(vc.view(np.uint16), want_v.view(np.uint16))
    return 1


def run_all() -> int:
    return check_layouts() + check_misaligned() + check_duplicates() + check_quantised() + check_two_threads()


_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
from test_rac_stream_numpy import run_all
print("ok", run_all())
"""

ISAS = {"avx512": "avx512f", "avx2": "avx2", "baseline": None}


def _cpu_flags() -> set:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    return next((set(line.split(":", 1)[1].split()) for line in text.splitlines() if line.startswith("flags")), set())


@pytest.mark.parametrize("isa", list(ISAS))
@pytest.mark.parametrize("stores", ["always", "never"])
def test_store_paths_match_the_reference(stores, isa):
    flag = ISAS[isa]
    if flag is not None and flag not in _cpu_flags():
        pytest.skip(f"this CPU has no {isa}")
    env = dict(os.environ, ASCEND_OPS_CPU_STREAM=stores, ASCEND_OPS_CPU_ISA=isa, ASCEND_OPS_NUM_THREADS="2")
    done = subprocess.run([sys.executable, "-c", _SCRIPT.format(tests=str(Path(__file__).parent))], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("ok")


def test_cases_in_process():
    """The same cases with the size rule (these small caches: ordinary stores)."""
    assert run_all() > 0
