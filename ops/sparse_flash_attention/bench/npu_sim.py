"""sparse_flash_attention on the NPU side, without an NPU (./dev bench):

rows()            the npu path on common's simulated Ascend runtime: per steady-state call, the
                  synchronisations, copies and allocations it makes and the host time it costs;
print_modelled()  the modelled NPU time of the AscendC kernel, run by the emulator on the
                  Ascend910B2 preset: DeepSeek-V3.2 decode (S1 = 1, N1 = 128 and 32, K = 2048,
                  D = 512 + 64, bfloat16, PA_BSND blocks of 128 at shuffled places, value = key,
                  sparse_mode 3, 2048 distinct positions of an 8k window per row), B in {1, 8, 32}.
                  Against the bound: max(HBM time of the minimum traffic, cube time at peak on
                  every AIC), both with the timing model's own constants (read from
                  common/ascendc_cpu/include/ascendc_cpu/timing_model.h). The busiest pipes of
                  the busiest core say where the time goes. A model, not a measurement:
                  modelled, not run on NPU.

python ops/sparse_flash_attention/bench/npu_sim.py [--quick]  prints the modelled table.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import ml_dtypes
import numpy as np

from ascend_ops.common.loader import load_native
from ascend_ops.common.table import format_table
from ascend_ops.devkit.device_arrays import device  # 512-byte aligned, as device allocations are

D, DR, K, BLOCK_SIZE, KV_LEN = 512, 64, 2048, 128, 8192
ROOT = Path(__file__).resolve().parents[3]
TIMING_MODEL = ROOT / "common" / "ascendc_cpu" / "include" / "ascendc_cpu" / "timing_model.h"
MODEL_SOC, MODEL_AICS = "Ascend910B2", 24
MODEL_DECODE = [(n1, b) for n1 in (128, 32) for b in (1, 8, 32)]  # (N1, B)


def _bf16(rng, shape):
    """Standard normal values as ml_dtypes.bfloat16."""
    return rng.standard_normal(shape, dtype=np.float32).astype(ml_dtypes.bfloat16)


def decode_case(n1: int, b: int, seed: int = 0) -> dict:
    """Keyword arguments of core.run_emu / kernel_tiling for one decode step of b requests
    (every array 512-byte aligned, as on the device)."""
    rng = np.random.default_rng(seed)
    per_batch = KV_LEN // BLOCK_SIZE
    blocks = b * per_batch
    idx = np.stack([rng.permutation(KV_LEN)[:K] for _ in range(b)]).astype(np.int32).reshape(b, 1, 1, K)
    key = device(_bf16(rng, (blocks, BLOCK_SIZE, 1, D)))
    return dict(query=device(_bf16(rng, (b, 1, n1, D))), key=key, value=key, sparse_indices=device(idx),
                scale_value=float(1 / np.sqrt(D + DR)),
                block_table=device(rng.permutation(blocks).reshape(b, per_batch).astype(np.int32)),
                actual_seq_lengths_kv=device(np.full(b, KV_LEN, np.int32)),
                query_rope=device(_bf16(rng, (b, 1, n1, DR))),
                key_rope=device(_bf16(rng, (blocks, BLOCK_SIZE, 1, DR))), layout_query="BSND", layout_kv="PA_BSND",
                sparse_mode=3)


def timing_constants() -> dict:
    """kClockGHz, kHbmBytesPerSecond, kCubeMacsPerCycle from the emulator's timing model."""
    text = TIMING_MODEL.read_text()
    return {name: float(re.search(rf"{name} = ([0-9.e]+);", text).group(1))
            for name in ("kClockGHz", "kHbmBytesPerSecond", "kCubeMacsPerCycle")}


def bound_us(n1: int, b: int, c: dict) -> tuple:
    """(bound, what): the minimum HBM traffic (gathered latent + rope rows, query, output,
    indices) at HBM bandwidth vs the Q.K^T and P.V multiply-adds at peak on every AIC."""
    traffic = b * (K * (D + DR) * 2 + n1 * (D + DR) * 2 + n1 * D * 2 + K * 4)
    hbm = traffic / c["kHbmBytesPerSecond"] * 1e6
    macs = b * n1 * K * (D + DR + D)
    cube = macs / (c["kCubeMacsPerCycle"] * MODEL_AICS * c["kClockGHz"] * 1e9) * 1e6
    return (hbm, "HBM") if hbm >= cube else (cube, "cube")


def modelled(shapes=MODEL_DECODE) -> list:
    core = load_native("ascend_ops.sparse_flash_attention", "core")
    if not getattr(core, "HAS_EMU", False):
        return []
    c = timing_constants()
    rows = []
    for n1, b in shapes:
        args = decode_case(n1, b)
        tiling = core.kernel_tiling(**args, soc=MODEL_SOC)
        t0 = time.perf_counter()
        *_, r = core.run_emu(**args, order="in_order", soc=MODEL_SOC)
        wall = time.perf_counter() - t0
        bound, what = bound_us(n1, b, c)
        us = r["modelled_us"]
        top = sorted(r["pipe_busy_max_us"].items(), key=lambda kv: -kv[1])[:4]
        split = f"{tiling['block_dim']} x {tiling['tile_keys']} ({tiling['splits']})"
        rows.append([f"decode N1={n1} B={b}", split, f"{us:.1f}",
                     f"{bound:.1f} ({what})", f"{us / bound:.2f}", f"{r['gm_bound_us']:.1f}", r["bound"],
                     ", ".join(f"{k} {v:.0f}" for k, v in top), f"{wall:.0f}"])
    return rows


def print_modelled(quick: bool = False) -> None:
    shapes = [s for s in MODEL_DECODE if s[1] == 1] if quick else MODEL_DECODE
    rows = modelled(shapes)
    if not rows:
        print("modelled NPU time: the emulator build is off (AOP_WITH_EMU)")
        return
    print()
    print(f"Modelled NPU time of the AscendC kernel ({MODEL_SOC} preset, emulator timing model; K={K} "
          f"D={D}+{DR} bf16 PA_BSND/{BLOCK_SIZE}, value = key) - modelled, not run on NPU")
    print(format_table(["shape", "AICs x tile (splits)", "modelled us", "bound us", "modelled / bound",
                        "emu memory bound us", "emu bound", "busiest pipes (us, busiest core)", "emulation s"], rows))
    print("target: modelled / bound <= 2")


def rows(batches=(2,)) -> list:
    """Host cost of a steady-state call on the simulated runtime (devkit's npu_sim_row)."""
    from ascend_ops.devkit import ascend_sim, npu_sim_bench

    core = load_native("ascend_ops.sparse_flash_attention", "core")
    if not getattr(core, "HAS_NPU_SIM", False) or not ascend_sim.available():
        return []
    stream, out = ascend_sim.Stream(), []
    n1, k = 16, 64
    for b in batches:
        args = decode_case(n1, b)
        args["sparse_indices"] = np.ascontiguousarray(args["sparse_indices"][..., :k])
        names = ("query", "key", "sparse_indices", "block_table", "actual_seq_lengths_kv", "query_rope", "key_rope")
        dev = {n: ascend_sim.to_device(args[n]) for n in names}
        o = ascend_sim.empty(args["query"].shape, ml_dtypes.bfloat16)
        call = lambda: core.run_npu_sim(**{n: d.array for n, d in dev.items()}, value=dev["key"].array,  # noqa: E731
                                        scale_value=args["scale_value"], attention_out=o.array,
                                        stream=stream.handle, layout_query="BSND", layout_kv="PA_BSND")
        out.append(npu_sim_bench.npu_sim_row(f"decode B={b} N1={n1} K={k} bf16 PA_BSND", call, stream, calls=10))
    stream.destroy()
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="B = 1 only")
    args = parser.parse_args(argv)
    print_modelled(args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
