"""lightning_indexer_quant design study: where the dequantisation and the head-weighted ReLU sum
run (head_sum_study.h). Builds head_sum_study.cpp against the AscendC emulator with g++, runs the
three routes at decode B in {1, 8, 32} x S2 in {8k, 32k, 128k} on the Ascend910B2 preset and
prints the modelled table; shapes over --max-keys keys are extrapolated along the line through
the same B's two largest emulated S2 (marked). Modelled, not run on NPU.

    python ops/lightning_indexer/bench/quant_study/run.py [--max-keys 1048576]
"""
from __future__ import annotations

import argparse
import csv
import io
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
EMU = ROOT / "common" / "ascendc_cpu"
SHAPES = [(b, s2) for b in (1, 8, 32) for s2 in (8192, 32768, 131072)]
ROUTES = ("float-vector", "int8-vector", "int8-cube")
kDim = 128


def build(out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    exe = out_dir / "head_sum_study"
    srcs = sorted((EMU / "src").glob("*.cpp")) + [HERE / "head_sum_study.cpp"]
    newest = max(p.stat().st_mtime for p in srcs + list((EMU / "include").rglob("*.h")) + [HERE / "head_sum_study.h"])
    if exe.exists() and exe.stat().st_mtime > newest:
        return exe
    cmd = [os.environ.get("CXX", "g++"), "-std=c++20", "-O2", f"-I{EMU / 'include'}", f"-I{EMU / 'src'}",
           f"-I{ROOT / 'ops' / 'lightning_indexer'}", f"-I{HERE}", *map(str, srcs), "-o", str(exe), "-lpthread"]
    subprocess.run(cmd, check=True)
    return exe


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-keys", type=int, default=1 << 20)
    ap.add_argument("--build-dir", default=str(ROOT / "build" / "quant_study"))
    ap.add_argument("--csv", help="format this earlier output of head_sum_study instead of running it")
    args = ap.parse_args()
    if args.csv:
        text = Path(args.csv).read_text()
    else:
        exe = build(Path(args.build_dir))
        text = subprocess.run([str(exe), str(args.max_keys)], check=True, capture_output=True, text=True).stdout
    rows = {(int(r["B"]), int(r["S2"]), r["route"]): r for r in csv.DictReader(io.StringIO(text))}
    print("| B | S2 | how | float-vector µs | int8-vector µs | int8-cube µs | int8-cube / float | int8-cube / keys at HBM | "
          "int8-cube emu memory bound µs | int8-cube busiest pipes, busiest core (µs) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for b, s2 in SHAPES:
        how, us, bound, pipes = "emulated", {}, None, ""
        if all((b, s2, r) in rows for r in ROUTES):
            us = {r: float(rows[(b, s2, r)]["modelled_us"]) for r in ROUTES}
            bound = float(rows[(b, s2, "int8-cube")]["gm_bound_us"])
            busy = rows[(b, s2, "int8-cube")]["busiest_pipes_us"].split()
            busy = sorted(((float(x.split("=")[1]), x.split("=")[0]) for x in busy), reverse=True)[:3]
            pipes = ", ".join(f"{n} {v:.1f}" for v, n in busy)
        else:
            # the study sees only the total key count (one query row streams every group's keys),
            # so a shape is extrapolated along the two largest emulated totals
            done = sorted({bb * s for (bb, s, r) in rows if r == ROUTES[0]})
            if len(done) < 2:
                continue
            n_a, n_b = done[-2], done[-1]
            at = {bb * s: (bb, s) for (bb, s, r) in rows}
            how = f"extrapolated ({n_a // 1024}k, {n_b // 1024}k keys)"
            for r in ROUTES:
                ya, yb = (float(rows[(*at[n], r)]["modelled_us"]) for n in (n_a, n_b))
                us[r] = yb + (yb - ya) * (b * s2 - n_b) / (n_b - n_a)
        ratio = us["int8-cube"] / us["float-vector"]
        keys_at_hbm = b * s2 * (kDim + 2) / 1.6e12 * 1e6  # int8 key + float16 scale, at the 1.6 TB/s peak
        print(f"| {b} | {s2 // 1024}k | {how} | {us['float-vector']:.1f} | {us['int8-vector']:.1f} | "
              f"{us['int8-cube']:.1f} | {ratio:.2f} | {us['int8-cube'] / keys_at_hbm:.2f} | "
              f"{'' if bound is None else f'{bound:.1f}'} | {pipes} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
