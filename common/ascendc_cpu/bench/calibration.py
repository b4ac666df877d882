"""The emulator's timing model against published Atlas A2/A3 measurements (issue 33).

    python common/ascendc_cpu/bench/calibration.py [--bin PATH] [--quick] [--no-ops]

Runs the calibration kernels of calibration.cpp (a tiled cube GEMM, a streaming read, a tiny
vector kernel; built with common's tests: `ascendc_cpu_calibration` under build/*/ascendc_cpu/
bench) and our own kernels at the published op shapes (reshape_and_cache, lightning_indexer;
installed ops, `backend="emu"`), each on the SoC preset of the measurement, and prints one table:
figure, source, shape, measured, modelled, ratio (modelled / measured). Rows of our own kernels
are marked "different kernel": the published figure times CANN's / ATB's / torch_npu's kernel,
not ours. The published figures and their sources: ../../../../shared/research/
published-ascend-timings.md (ids MM-1, HBM-1, RC-4, LI-1, ...). Nothing here runs on an NPU.
--quick skips the 6144^3 GEMM (minutes of emulation), LI-3, LI-4 and the S2 = 8194 indexer row.
"""
from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
PTO = "hw-native-sys/pto-isa @ 3186c381, kernels/manual/a2a3/gemm_performance/README.md"
CATLASS = "hicann/catlass @ 0dfcf9df, docs/en/1_Practice/11_matmul_optimization.md"
INFINICORE = "JoeZhang-0x000/vllm-infinicore @ bffc9b58, docs/npu-performance-gap.md (per call: derived)"
TILELANG = "tile-ai/tilelang-ascend PR #1476 (msprof)"
FLAGGEMS = "flagos-ai/FlagGems-vllm PR #791 (event timing, device not stated)"

# (id, what, source, shape, measured us, calibration case) for the purpose-written kernels.
KERNEL_ROWS = [
    ("MM-2", "GEMM, A3 (24 AIC)", PTO, "1536^3 fp16->fp32", 38.8, "gemm1536"),
    ("MM-1", "GEMM, A3 (24 AIC)", PTO, "6144^3 fp16->fp32", 1506.0, "gemm6144"),
    ("HBM-1", "GEMV-like streaming read (20 AIC, chip not named)", CATLASS + " case 2",
     "201 MB of B read once (M=20, N=6144, K=16384 fp16)", 139.6, "read201"),
    ("HBM-2", "GEMV streaming read (24 AIC, chip not named)", CATLASS + " case 3",
     "15.7 MB of B read once (M=1, N=768, K=5120 fp32)", 15.5, "read16"),
    ("LI-8", "small-kernel floor: a tiny Triton indexer", FLAGGEMS, "1 query, S2=8", 1.85, "tiny"),
    ("RC-7", "small-kernel floor: Slice in a decode profile", "index id 54037766316 (msprof; repository "
     "not identified)", "batch 8", 2.6, "tiny"),
]
QUICK_SKIP = {"gemm6144"}


def find_binary(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    found = sorted((ROOT / "build").glob("*/ascendc_cpu/bench/ascendc_cpu_calibration"),
                   key=lambda p: p.stat().st_mtime)
    if not found:
        sys.exit("calibration: no ascendc_cpu_calibration binary under build/*/ascendc_cpu/bench: build common "
                 "with -DAOP_BUILD_TESTS=ON (./dev test builds it), or pass --bin")
    return found[-1]


def run_kernels(binary: Path, cases: list) -> dict:
    out = subprocess.run([str(binary), *cases], check=True, capture_output=True, text=True).stdout
    return {r["case"]: r for r in map(json.loads, out.splitlines())}


def rac_rows() -> list:
    """reshape_and_cache (ours) at the published ATB shapes: H=8, D=128, block 128, on 910B4."""
    from ascend_ops.reshape_and_cache import reshape_and_cache

    measured = {1: ("RC-4", 2.5), 32: ("RC-5", 6.9), 2048: ("RC-1", 23.1), 4096: ("RC-2", 35.0)}
    rows, rng = [], np.random.default_rng(0)
    for tokens, (fid, us) in measured.items():
        blocks = tokens // 128 + 2
        key = rng.standard_normal((tokens, 8, 128)).astype(np.float16)
        caches = [np.zeros((blocks, 128, 8, 128), np.float16) for _ in range(2)]
        slots = rng.permutation(blocks * 128)[:tokens].astype(np.int64)
        r = reshape_and_cache(key, key.copy(), caches[0], caches[1], slots, backend="emu", soc="Ascend910B4",
                              order="in_order")
        rows.append((fid, "KV write (ATB ReshapeAndCache), different kernel", INFINICORE,
                     f"T={tokens} H=8 D=128 (bf16 measured, fp16 here: same bytes), 910B4", us, r))
    return rows


def li_case(lens: list, s1: int, n1: int, k: int, dtype: str, layouts: tuple, rng) -> dict:
    """Keyword arguments of the indexer's core.run_emu: B = len(lens) requests of s1 query tokens
    and lens[b] keys, D = 128, layouts (query, key) as the op names them, PA blocks of 128."""
    b, d = len(lens), 128
    if dtype == "bfloat16":
        def make(shape):
            return (rng.standard_normal(shape, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
    else:
        def make(shape):
            return rng.standard_normal(shape).astype(np.float16)
    lq, lk = layouts
    args = dict(layout_query=lq, layout_key=lk, sparse_count=k, dtype="bfloat16" if dtype == "bfloat16" else "")
    if lq == "BSND":
        args.update(query=make((b, s1, n1, d)), weights=make((b, s1, n1)))
    else:
        args.update(query=make((b * s1, n1, d)), weights=make((b * s1, n1)),
                    actual_seq_lengths_query=np.arange(1, b + 1, dtype=np.int32) * s1)
    if lk == "PA_BSND":
        per = max(-(-s // 128) for s in lens)
        args.update(key=make((b * per, 128, 1, d)), actual_seq_lengths_key=np.array(lens, np.int32),
                    block_table=rng.permutation(b * per).reshape(b, per).astype(np.int32))
    elif lk == "BSND":
        args.update(key=make((b, max(lens), 1, d)), actual_seq_lengths_key=np.array(lens, np.int32))
    else:
        args.update(key=make((sum(lens), 1, d)), actual_seq_lengths_key=np.cumsum(lens).astype(np.int32))
    return args


def li_rows(quick: bool) -> list:
    """lightning_indexer (ours) at LI-1..4 (910B3, msprof) and LI-5..7 (device not stated: the
    910B2 preset), sparse_mode 3."""
    from ascend_ops.common.loader import load_native

    core = load_native("ascend_ops.lightning_indexer", "core")
    rng = np.random.default_rng(0)
    pa, b3 = ("BSND", "PA_BSND"), "Ascend910B3"
    cases = [("LI-1", TILELANG, [1024, 2048], 1, 8, 2048, "float16", pa, b3, 20.72,
              "B=2 S1=1 S2=1024,2048 N1=8 top-k 2048 fp16 BSND/PA, 910B3"),
             ("LI-2", TILELANG, [512] * 20, 3, 64, 315, "bfloat16", ("TND", "PA_BSND"), b3, 30.08,
              "B=20 S1=3 S2=512 N1=64 top-k 315 bf16 TND/PA, 910B3"),
             ("LI-3", TILELANG, [3072] * 16, 5, 64, 2048, "float16", ("BSND", "BSND"), b3, 75.86,
              "B=16 S1=5 S2=3072 N1=64 top-k 2048 fp16 BSND/BSND, 910B3"),
             ("LI-4", TILELANG, [3072] * 8, 5, 24, 2048, "float16", ("TND", "TND"), b3, 42.42,
              "B=8 S1=5 S2=3072 N1=24 top-k 2048 fp16 TND/TND, 910B3")]
    if quick:
        cases = cases[:2]
    for fid, s2, us in (("LI-7", 130, 20.42), ("LI-6", 2050, 22.60), ("LI-5", 8194, 27.44)):
        if quick and s2 > 4096:
            continue
        cases.append((fid, FLAGGEMS, [s2], 1, 64, 512, "bfloat16", pa, "Ascend910B2", us,
                      f"1 query N1=64 top-k 512 bf16 S2={s2} BSND/PA, 910B2 preset"))
    rows = []
    for fid, src, lens, s1, n1, k, dtype, layouts, soc, us, shape in cases:
        _, _, r = core.run_emu(**li_case(lens, s1, n1, k, dtype, layouts, rng), sparse_mode=3, order="in_order",
                               soc=soc)
        rows.append((fid, "lightning indexer (CANN / torch_npu), different kernel", src, shape, us, r))
    return rows


def fmt(x: float) -> str:
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="the ascendc_cpu_calibration executable (default: newest under build/)")
    ap.add_argument("--quick", action="store_true", help="skip the 6144^3 GEMM, LI-3, LI-4 and the S2=8194 indexer row")
    ap.add_argument("--no-ops", action="store_true", help="only the purpose-written kernels")
    ap.add_argument("--json", type=Path, help="also write every row here")
    args = ap.parse_args(argv)

    cases = sorted({row[5] for row in KERNEL_ROWS} - (QUICK_SKIP if args.quick else set()))
    kernels = run_kernels(find_binary(args.bin), cases)
    rows = [(fid, what, src, shape, us, kernels[case]) for fid, what, src, shape, us, case in KERNEL_ROWS
            if case in kernels]
    if not args.no_ops:
        rows += rac_rows() + li_rows(args.quick)

    print(f"Calibration of the emulator's timing model, {datetime.date.today()} (modelled, not run on NPU)")
    header = ["id", "figure", "shape", "measured us", "modelled us", "modelled / measured", "model bound", "source"]
    table = [[fid, what, shape, fmt(us), fmt(r["modelled_us"]), f"{r['modelled_us'] / us:.2f}", r["bound"], src]
             for fid, what, src, shape, us, r in rows]
    by_id = {row[0]: row for row in rows}
    if "LI-5" in by_id and "LI-6" in by_id:  # the per-key slope of the indexer (ns per key)
        a, b = by_id["LI-6"][5], by_id["LI-5"][5]
        slope = (b["modelled_us"] - a["modelled_us"]) / (8194 - 2050) * 1e3
        table.append(["LI-5/6", "indexer slope per key, different kernel", "S2 2050 -> 8194", "0.79 ns",
                      f"{slope:.2f} ns", f"{slope / 0.788:.2f}", "", FLAGGEMS + " (derived)"])
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in table:
        print("| " + " | ".join(str(c) for c in row) + " |")
    for fid, _, _, _, _, r in rows:
        if "how" in r and r["how"] != "emulated":
            print(f"{fid}: {r['how']}")
    if args.json:
        args.json.write_text(json.dumps([{"id": fid, "measured_us": us, "report": {k: v for k, v in r.items()
                                          if k in ("modelled_us", "launch_us", "gm_bound_us", "bound", "how")}}
                                         for fid, _, _, _, us, r in rows], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
