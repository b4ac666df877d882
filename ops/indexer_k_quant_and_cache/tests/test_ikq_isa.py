"""Every build of the split int8 codes byte-exact against the reference on the hard cases of the
quotient x / sc: ASCEND_OPS_CPU_ISA caps the hand-vectorised kernels (host/int8_rows_x86.cpp:
"avx512", "avx2", "baseline" = the generic loop), so each runs in its own process. bfloat16 k:
every amax mantissa against every x mantissa of the ten binades at and below it, both signs;
float16 k: every 5th amax mantissa likewise, subnormal x included; float32 k: exact ties and
random rows; groups of 8 and 16 (the kernels' fallbacks). The amax exponents put sc inside the fast kernels' range [2^-100, 2^100] (near both
ends) and outside it (subnormal sc, sc > 2^100: the generic loop). Where the kernels use
Markstein's correction instead of a division, this is the exhaustive check of its codes (scaling
x and amax by a power of two scales every step of it exactly)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ascend_ops.indexer_k_quant_and_cache import indexer_k_quant_and_cache, reference

D = 128


def _pack(rows_of_x: list, amax_values: np.ndarray) -> np.ndarray:
    """float32 [T, D]: per amax, tokens [amax, x_1 .. x_127] until its x run out (padded with 0)."""
    tokens = []
    for amax, xs in zip(amax_values, rows_of_x):
        per = D - 1
        n = -(-len(xs) // per)
        body = np.zeros(n * per, np.float32)
        body[: len(xs)] = xs
        tokens.append(np.concatenate([np.full((n, 1), amax, np.float32), body.reshape(n, per)], axis=1))
    return np.concatenate(tokens)


def _binade_values(mantissa_bits: int, exponents) -> np.ndarray:
    m = 1.0 + np.arange(2 ** mantissa_bits, dtype=np.float64) / 2 ** mantissa_bits
    v = np.concatenate([np.ldexp(m, e) for e in exponents])
    return np.concatenate([v, -v])


def bf16_case() -> np.ndarray:
    """uint16 bfloat16 bits [T, D]."""
    rows, amaxes = [], []
    for ea in (0, -92, 106, -100, 110, -130):
        xs_all = _binade_values(7, range(ea - 9, ea + 1))
        for m in range(128):
            amax = np.ldexp(1.0 + m / 128, ea)
            xs = xs_all[np.abs(xs_all) <= amax]
            rows.append(xs.astype(np.float32))
            amaxes.append(np.float32(amax))
    x = _pack(rows, np.array(amaxes, np.float32))
    return (x.view(np.uint32) >> 16).astype(np.uint16)  # exact above 2^-126; below, what it truncates to


def f16_case() -> np.ndarray:
    rows, amaxes = [], []
    for ea in (0, -10):
        xs_all = _binade_values(10, range(ea - 9, ea + 1))
        xs_all = np.concatenate([xs_all, np.arange(-1023, 1024) * 2.0 ** -24])  # subnormals
        for m in range(0, 1024, 5):
            amax = np.ldexp(1.0 + m / 1024, ea)
            rows.append(xs_all[np.abs(xs_all) <= amax].astype(np.float32))
            amaxes.append(np.float32(amax))
    return _pack(rows, np.array(amaxes, np.float32)).astype(np.float16)


def f32_case() -> np.ndarray:
    rng = np.random.default_rng(5)
    ties = np.concatenate([np.arange(-127, 127) + 0.5, np.arange(-127, 128)]).astype(np.float32)
    rows = []
    for e in (-90, -3, 0, 5, 99):  # amax = 127 * 2^e: sc = 2^e, ties exact
        scale = np.float32(2.0 ** e)
        body = rng.permutation(ties)[: (len(ties) // (D - 1)) * (D - 1)].reshape(-1, D - 1) * scale
        rows.append(np.concatenate([np.full((len(body), 1), 127 * scale, np.float32), body], axis=1))
    rows.append((rng.standard_normal((300, D)) * 3).astype(np.float32))
    return np.concatenate(rows)


def odd_groups_case() -> np.ndarray:
    """bfloat16 bits [T, 48]: groups of 8 and 16 (the kernels' fallbacks and AVX-512's 16-lane path)."""
    x = (np.random.default_rng(7).standard_normal((200, 48)) * 4).astype(np.float32)
    return (x.view(np.uint32) >> 16).astype(np.uint16)


def run_case(k: np.ndarray, bf16: bool, qbs: int = D):
    t, d = k.shape
    block_size = 64
    nb = -(-t // block_size)
    cache = np.zeros((nb, block_size, 1, d), np.int8)
    scales = np.zeros((nb, block_size, 1, d // qbs), np.float32)
    slots = np.random.default_rng(1).permutation(nb * block_size)[:t].astype(np.int64)
    want_cache, want_scales = reference.indexer_k_quant_and_cache(k, cache, slots, scales, quant_block_size=qbs)
    indexer_k_quant_and_cache(k, cache, slots, k_scale_cache=scales, quant_block_size=qbs, backend="cpu",
                              dtype="bfloat16" if bf16 else None)
    np.testing.assert_array_equal(cache, want_cache)
    np.testing.assert_array_equal(scales.view(np.uint32), want_scales.view(np.uint32))
    return t


def run_fused(k: np.ndarray, bf16: bool, qbs: int = D, scale_fmt=None):
    """The fused fp8 layout [nb, bs, D + 4G] (codes streamed out when ASCEND_OPS_CPU_STREAM=always)."""
    t, d = k.shape
    block_size = 16
    nb = -(-t // block_size)
    cache = np.random.default_rng(2).integers(0, 256, (nb, block_size, d + 4 * (d // qbs)), dtype=np.uint8)
    slots = np.random.default_rng(3).permutation(nb * block_size)[:t].astype(np.int64)
    want, _ = reference.indexer_k_quant_and_cache(k, cache, slots, quant_block_size=qbs, scale_fmt=scale_fmt)
    indexer_k_quant_and_cache(k, cache, slots, quant_block_size=qbs, scale_fmt=scale_fmt, backend="cpu",
                              dtype="bfloat16" if bf16 else None)
    np.testing.assert_array_equal(cache, want)
    return t


_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
from test_ikq_isa import bf16_case, f16_case, f32_case, odd_groups_case, run_case, run_fused
n = run_case(bf16_case(), True) + run_case(f16_case(), False) + run_case(f32_case(), False)
n += run_case(odd_groups_case(), True, 8) + run_case(odd_groups_case(), True, 16)
n += run_fused(odd_groups_case(), True, 16) + run_fused(odd_groups_case()[:, :40], True, 8, "ue8m0")
print("ok", n)
"""


def _cpu_flags() -> set:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


@pytest.mark.parametrize("stores", ["always", "never"])
@pytest.mark.parametrize("isa", ["avx512", "avx2", "baseline"])
def test_every_int8_build_matches_the_reference_on_hard_quotients(isa, stores):
    """Each build with the code rows streamed out (ASCEND_OPS_CPU_STREAM=always: the path caches
    larger than the last-level cache take) and with ordinary stores."""
    flags = _cpu_flags()
    if isa == "avx512" and "avx512f" not in flags or isa == "avx2" and not {"avx2", "fma"} <= flags:
        pytest.skip(f"this CPU has no {isa}")
    env = dict(os.environ, ASCEND_OPS_CPU_ISA=isa, ASCEND_OPS_CPU_STREAM=stores)
    done = subprocess.run([sys.executable, "-c", _SCRIPT.format(tests=str(Path(__file__).parent))], env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("ok")
