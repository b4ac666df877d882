"""Modelled NPU time of lightning_indexer_quant's AscendC kernel (the emulator's timing model,
Ascend910B2 preset) against our float kernel's at the same shape, and against its own bound.

DeepSeek-V3.2 decode (N1 = 64, D = 128, K = 2048, PA_BSND blocks of 128, sparse_mode 3, one query
row per batch), B in {1, 8, 32} x S2 in {8k, 32k, 128k}: the int8 kernel (int8 q / k, float16
weights and scales) and lightning_indexer's kernel on bfloat16 q / k (its own bench's case,
ops/lightning_indexer/bench/run.py: model_case), each emulated once in the same run. Bound: the
keys and their scales read once at HBM peak, B * S2 * (128 + 2) bytes / kHbmBytesPerSecond (the
timing model's constant). Shapes of more than --max-keys keys (B * S2) are not emulated (too
slow): their times are extrapolated along the line (a fixed part plus a part per key) through the
same B's two largest emulated S2 (S2 / 2 is emulated too when only one was), and marked so. A model, not a measurement; not run on NPU.
Targets (issue 31): int8 / float <= 0.65, int8 / bound <= 2.
"""
from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import numpy as np

from ascend_ops.common.loader import load_native
from ascend_ops.common.table import format_table
from ascend_ops.devkit.device_arrays import device_case

HERE = Path(__file__).resolve().parent
N1, D, K, BLOCK_SIZE = 64, 128, 2048, 128
SOC = "Ascend910B2"
DECODE = [(b, s2) for b in (1, 8, 32) for s2 in (8192, 32768, 131072)]


def _float_bench():
    """lightning_indexer's bench module (its model_case, emulate and timing constants)."""
    path = HERE / "run.py"
    spec = importlib.util.spec_from_file_location("lightning_indexer_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def quant_case(b: int, s2: int, seed: int = 0) -> dict:
    """NumPy arguments of core.run_emu: int8 q / k, float16 weights and scales, shuffled blocks;
    every array 512-byte aligned, as on the device."""
    rng = np.random.default_rng(seed)
    blocks = b * s2 // BLOCK_SIZE
    return device_case(dict(query=rng.integers(-127, 128, (b, 1, N1, D), dtype=np.int8),
                key=rng.integers(-127, 128, (blocks, BLOCK_SIZE, 1, D), dtype=np.int8),
                weights=rng.standard_normal((b, 1, N1)).astype(np.float16),
                query_dequant_scale=rng.uniform(1e-3, 2e-2, (b, 1, N1)).astype(np.float16),
                key_dequant_scale=rng.uniform(1e-3, 2e-2, (blocks, BLOCK_SIZE, 1)).astype(np.float16),
                actual_seq_lengths_key=np.full((b,), s2, np.int32),
                block_table=rng.permutation(blocks).reshape(b, -1).astype(np.int32),
                layout_query="BSND", layout_key="PA_BSND", sparse_count=K))


def emulate_quant(core, b: int, s2: int) -> tuple:
    t0 = time.perf_counter()
    _, _, r = core.run_emu(**quant_case(b, s2), sparse_mode=3, return_value=True, order="in_order", soc=SOC)
    return r, time.perf_counter() - t0


def rows(max_keys: int, shapes=DECODE) -> list:
    fb = _float_bench()
    c = fb.timing_constants()
    quant_core = load_native("ascend_ops.lightning_indexer_quant", "core")
    float_core = load_native("ascend_ops.lightning_indexer", "core")
    done = {}  # b -> {s2: (quant report, float report)}
    out = []
    for b, s2 in shapes:
        bound = b * s2 * (D + 2) / c["kHbmBytesPerSecond"] * 1e6
        runs = done.setdefault(b, {})
        if b * s2 <= max_keys:
            rq, wq = emulate_quant(quant_core, b, s2)
            rf, wf = fb.emulate(float_core, b, 1, s2)
            runs[s2] = (rq, rf)
            how = f"emulated ({wq:.0f} s + {wf:.0f} s)"
            tq, tf = rq["modelled_us"], rf["modelled_us"]
            busy = rq["pipe_busy_max_us"]
        elif runs:
            if len(runs) == 1:  # S2 / 2 of the same B emulated too, for the line only
                (s_only,) = runs
                runs[s_only // 2] = (emulate_quant(quant_core, b, s_only // 2)[0],
                                     fb.emulate(float_core, b, 1, s_only // 2)[0])
            (sa, (qa, fa)), (sb, (qb, fb_)) = sorted(runs.items())[-2:]

            def line(ra, rb, key):
                return rb[key] + (rb[key] - ra[key]) / (sb - sa) * (s2 - sb)

            tq = max(line(qa, qb, "modelled_us"), line(qa, qb, "gm_bound_us"))
            tf = max(line(fa, fb_, "modelled_us"), line(fa, fb_, "gm_bound_us"))
            how = f"extrapolated from S2={sa // 1024}k, {sb // 1024}k"
            busy = {k: v * tq / qb["modelled_us"] for k, v in qb["pipe_busy_max_us"].items()}
        else:
            continue
        top = sorted(busy.items(), key=lambda kv: -kv[1])[:3]
        out.append([f"decode B={b} S2={s2 // 1024}k", how, f"{tq:.1f}", f"{tf:.1f}", f"{tq / tf:.2f}",
                    f"{bound:.1f}", f"{tq / bound:.2f}", ", ".join(f"{k} {v:.1f}" for k, v in top)])
    return out


def print_table(max_keys: int) -> None:
    print()
    print(f"Modelled NPU time of the AscendC kernels ({SOC} preset, emulator timing model; decode N1={N1} D={D} "
          f"K={K} PA_BSND/{BLOCK_SIZE}) - modelled, not run on NPU")
    print(format_table(["shape", "how", "int8 us", "float (bf16) us", "int8 / float", "keys+scales at HBM us",
                        "int8 / bound", "int8 busiest pipes (us, busiest core)"], rows(max_keys)))
    print("targets (issue 31): int8 / float <= 0.65, int8 / bound <= 2")
