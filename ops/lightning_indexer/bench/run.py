"""Benchmark of lightning_indexer (run by `./dev bench`).

CPU: providers timed back to back on the same tensors (N1=64, D=128, sparse_count 2048,
bfloat16, PA_BSND keys in blocks of 128, sparse_mode 3), one shape (B, S1, S2) at a time:
  cpu           torch.ops.ascend_ops.lightning_indexer (the fused C++ CPU kernel)
  torch native  the same computation in PyTorch: gather, einsum q.k, relu, weighted head sum,
                causal mask, topk (materialises [B, S1, N1, S2])
  matmul bf16   torch.matmul of the same FLOPs in bfloat16 ([S1*N1, D] x [D, S2] per batch, keys
                gathered and transposed beforehand, in column chunks of 8192): the machine's
                bfloat16 compute rate as PyTorch reaches it
  copy          a copy of a 256 MiB tensor: the memory bandwidth (bytes read + written)
The key cache is realistic: CACHE_BYTES (256 MiB, 8x this machine's 32 MiB L3) of blocks, of
which each batch uses S2 / 128 at random places (a shuffled block table), so the keys are read
from memory, not from the CPU's caches.
Ratios: speedup = native p50 / cpu p50; matmul fraction = matmul p50 / cpu p50 (1 = the cpu
kernel does its FLOPs at torch's bfloat16 matmul rate); key GB/s = B * S2 * D * 2 bytes / cpu
p50, bandwidth fraction = key GB/s / copy GB/s. The load average is printed with each shape:
2 shared cores are noisy. OMP_WAIT_POLICY defaults to PASSIVE here (see below). A second table
gives the same ratios from process CPU time per call (all threads), which other processes on
the cores hardly move.
Memory: the native way's [B, S1, N1, S2] bfloat16 product against the CPU kernel's extra
memory (its candidate lists and per-thread tiles, from its plan).
Targets (issue 15, reported, not asserted): speedup >= 3 at decode (B=2, S1=1, S2=16k) and
prefill, matmul fraction >= 0.9 at prefill, extra memory below the native intermediate.

Modelled NPU time (`--modelled`, also part of the default run unless --quick): the AscendC
kernel run by the emulator on the Ascend910B2 preset, DeepSeek-V3.2 shapes (N1=64, D=128,
K=2048, bfloat16, PA_BSND blocks of 128, sparse_mode 3): decode B in {1, 8, 32}, S1 = 1,
S2 in {8k, 32k, 128k}, and prefill B=1, S1=128, S2=8k; a DeepSeek-V4 decode row (C4A indexer:
cmp_ratio 4, top-k 512, TND query, B=8, 8k compressed rows). The emulator's timing model
(LaunchReport modelled_us, bound, gm_bound_us (HBM after the L2, or L2), pipe_busy_max_us) against the bound: keys read
once at HBM bandwidth vs the cube FLOPs at peak on every AIC, with the timing model's own
constants (read from common/ascendc_cpu/include/ascendc_cpu/timing_model.h). Shapes with more
than --max-keys keys (B * S2) are not emulated (too slow): their time is extrapolated along the
line (a fixed part plus a part per key) through the same B's two largest emulated S2, and marked
so. A model, not a measurement.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
# Threads that finish a parallel region sleep instead of spinning (all providers alike): with
# libgomp's default spinning, short calls on a machine shared with other processes mostly
# measure the scheduler (a 1 ms call seen at 16-36 ms). Set OMP_WAIT_POLICY to override.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
import torch  # noqa: E402

from ascend_ops.devkit import bench  # noqa: E402
from ascend_ops.common.table import format_table  # noqa: E402
from ascend_ops.common.loader import load_native  # noqa: E402
from ascend_ops.lightning_indexer import torch_ops  # noqa: E402,F401  (registers the op)
from ascend_ops.devkit.device_arrays import device_case  # noqa: E402

OP = "lightning_indexer"
N1, D, K, BLOCK_SIZE = 64, 128, 2048, 128
ISSUE_DECODE = (2, 1, 16384)  # (B, S1, S2): issue 15's decode shape
SHAPES = [ISSUE_DECODE, (4, 1, 32768), (2, 128, 16384)]
QUICK_SHAPES = [ISSUE_DECODE, (2, 128, 4096)]
CACHE_BYTES = 256 << 20
COPY_BYTES = 256 << 20


def make_case(b: int, s1: int, s2: int, seed: int = 0):
    """Inputs with a key cache of CACHE_BYTES (or the used blocks if more), used blocks shuffled."""
    g = torch.Generator().manual_seed(seed)
    used = b * s2 // BLOCK_SIZE
    blocks = max(used, CACHE_BYTES // (BLOCK_SIZE * D * 2))
    query = torch.randn(b, s1, N1, D, generator=g).to(torch.bfloat16)
    key = torch.randn(blocks, BLOCK_SIZE, 1, D, generator=g).to(torch.bfloat16)
    weights = torch.randn(b, s1, N1, generator=g).to(torch.bfloat16)
    block_table = torch.randperm(blocks, generator=g)[:used].view(b, -1).to(torch.int32)
    lengths = torch.full((b,), s2, dtype=torch.int32)
    return query, key, weights, block_table, lengths


def providers(query, key, weights, block_table, lengths):
    b, s1, s2 = query.shape[0], query.shape[1], int(lengths[0])
    op = torch.ops.ascend_ops.lightning_indexer

    def cpu():
        return op(query, key, weights, actual_seq_lengths_key=lengths, block_table=block_table, sparse_count=K)

    # native: gather the paged keys, q.k, relu, weighted head sum, causal mask, topk
    rows = torch.arange(s1)[:, None]
    cols = torch.arange(s2)[None, :]
    mask = cols > (s2 - s1 + rows)  # sparse_mode 3

    def native():
        k = key[block_table.long()].view(b, s2, D)                      # [B, S2, D]
        scores = torch.einsum("bshd,btd->bsht", query, k).relu_()      # [B, S1, N1, S2]
        total = torch.einsum("bsht,bsh->bst", scores, weights)          # [B, S1, S2]
        total = total.float().masked_fill_(mask, float("-inf"))
        return total.topk(min(K, s2), dim=-1).indices.int()

    qb = query.reshape(b, s1 * N1, D)
    kb = key[block_table.long()].view(b, s2, D).transpose(1, 2).contiguous()  # [B, D, S2]
    chunk = 8192
    out = torch.empty(s1 * N1, chunk, dtype=torch.bfloat16)

    def matmul():
        for i in range(b):
            for c in range(0, s2, chunk):
                torch.matmul(qb[i], kb[i, :, c:c + chunk], out=out[:, :min(chunk, s2 - c)])

    return {"cpu": cpu, "torch native": native, "matmul bf16": matmul}


def copy_provider():
    src = torch.ones(COPY_BYTES, dtype=torch.uint8)
    dst = torch.empty_like(src)
    return lambda: dst.copy_(src)


def extra_memory(query, key, weights, block_table, lengths) -> int:
    """Bytes the CPU kernel allocates beyond its outputs (from its plan): candidate lists of
    every work item (K entries of 8 bytes per row) plus, per thread, the query rows of an item,
    a key tile (float32, transposed: only where the bfloat16 key-major kernel does not run) and
    2K-entry running top-k buffers."""
    core = load_native("ascend_ops.lightning_indexer", "core")
    bits = lambda t: t.view(torch.int16).numpy().view("uint16")  # noqa: E731
    plan = core.cpu_plan(bits(query), bits(key), bits(weights), actual_seq_lengths_key=lengths.numpy(),
                         block_table=block_table.numpy(), layout_query="BSND", layout_key="PA_BSND",
                         sparse_count=K, sparse_mode=3, dtype="bfloat16")
    b, s1, s2 = query.shape[0], query.shape[1], int(lengths[0])
    chunks = -(-s2 // plan["key_chunk"])
    rows = plan["row_block"]
    cands = b * s1 * chunks * K * 8
    tile = 0 if plan["bf16_kernel"] else D * plan["key_tile"] * 4
    per_thread = rows * N1 * D * 4 + tile + rows * 2 * K * 8
    return cands + plan["threads"] * per_thread


def cpu_tables(shapes, runner) -> list:
    results, memory, summary, cpu_time = [], [], [], []
    copy_case = bench.Case(OP, "copy", f"{COPY_BYTES >> 20} MiB", "uint8", copy_provider(),
                           bytes_moved=2 * COPY_BYTES)
    for b, s1, s2 in shapes:
        tensors = make_case(b, s1, s2)
        label = f"B={b} S1={s1} S2={s2} N1={N1} D={D} K={K}"
        before = bench.load_average()
        fns = providers(*tensors)
        cases = [bench.Case(OP, provider, label, "bfloat16", fn) for provider, fn in fns.items()]
        shape_results = runner.run(cases, baseline="torch native")  # one shape at a time: native's memory
        cpu_ms = {provider: bench.cpu_time_ms(fn) for provider, fn in fns.items()}
        copy = runner.run([copy_case])[0]
        results += shape_results + [copy]
        by = {r.provider: r for r in shape_results}
        cpu_us = by["cpu"].p50_us
        flops = 2 * b * s1 * N1 * s2 * D
        key_gbps = b * s2 * D * 2 / cpu_us / 1e3
        summary.append([label, cpu_us / 1e3, by["torch native"].p50_us / 1e3, by["torch native"].p50_us / cpu_us,
                        flops / cpu_us / 1e3, by["matmul bf16"].p50_us / cpu_us, key_gbps, copy.gbps,
                        key_gbps / copy.gbps, f"{before} -> {bench.load_average()}"])
        cpu_time.append([label, cpu_ms["cpu"], cpu_ms["torch native"], cpu_ms["torch native"] / cpu_ms["cpu"],
                         cpu_ms["matmul bf16"] / cpu_ms["cpu"]])
        memory.append([label, b * s1 * N1 * s2 * 2 / 2**20, extra_memory(*tensors) / 2**20])
        del tensors
    bench.print_table(results)
    print()
    print(format_table(["shape", "cpu p50 ms", "native p50 ms", "speedup vs native", "cpu GFLOP/s",
                        "matmul fraction", "key GB/s", "copy GB/s", "bandwidth fraction", "load 1-min"], summary))
    print("targets: speedup vs native >= 3 (decode and prefill); matmul fraction >= 0.9 at prefill (S1=128)")
    print()
    print(format_table(["shape", "cpu CPU-time ms", "native CPU-time ms", "CPU-time speedup",
                        "CPU-time matmul fraction"], cpu_time))
    print("process CPU time per call, all threads (least of 3 rounds): the same ratios, less sensitive to load")
    print()
    print(format_table(["shape", "native [B,S1,N1,S2] MiB", "cpu extra MiB"], memory))
    print("target: cpu extra memory below the native intermediate")
    return results


ROOT = Path(__file__).resolve().parents[3]
TIMING_MODEL = ROOT / "common" / "ascendc_cpu" / "include" / "ascendc_cpu" / "timing_model.h"
MODEL_SOC, MODEL_AICS = "Ascend910B2", 24
MODEL_DECODE = [(b, 1, s2) for b in (1, 8, 32) for s2 in (8192, 32768, 131072)]  # (B, S1, S2)
MODEL_PREFILL = [(1, 128, 8192)]
# As vllm-ascend calls it at decode: TND query (the batch's tokens flat, with their ends), one or
# two (MTP) tokens per request.
MODEL_ENGINE = [(8, 1, 8192, "TND"), (8, 2, 8192, "TND")]
# DeepSeek-V4-Flash decode (C4A layer): keys compressed 4-fold (S2 = compressed rows: 8k = a 32k
# context), top-k 512, residuals in [0, 4); (B, S1, S2, layout_query, cmp_ratio, sparse_count).
MODEL_V4 = [(8, 1, 8192, "TND", 4, 512)]


def timing_constants() -> dict:
    """kClockGHz, kHbmBytesPerSecond, kCubeMacsPerCycle from the emulator's timing model."""
    text = TIMING_MODEL.read_text()
    return {name: float(re.search(rf"{name} = ([0-9.e]+);", text).group(1))
            for name in ("kClockGHz", "kHbmBytesPerSecond", "kCubeMacsPerCycle")}


def model_case(b: int, s1: int, s2: int, seed: int = 0, layout_query: str = "BSND", cmp_ratio: int = 1,
               sparse_count: int = K) -> dict:
    """NumPy arguments of core.run_emu: bfloat16 as uint16 bits, PA_BSND, shuffled blocks; a TND
    query holds the same rows flat, with their ends; cmp_ratio > 1 adds residuals in [0, r).
    Every array 512-byte aligned, as on the device (ascend_ops.devkit.device_arrays)."""
    rng = np.random.default_rng(seed)
    blocks = b * s2 // BLOCK_SIZE

    def bf16(shape):
        return (rng.standard_normal(shape, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)

    case = dict(query=bf16((b, s1, N1, D)), key=bf16((blocks, BLOCK_SIZE, 1, D)), weights=bf16((b, s1, N1)),
                actual_seq_lengths_key=np.full((b,), s2, np.int32),
                block_table=rng.permutation(blocks).reshape(b, -1).astype(np.int32),
                layout_query="BSND", layout_key="PA_BSND", sparse_count=sparse_count, dtype="bfloat16",
                cmp_ratio=cmp_ratio,
                cmp_residual_k=rng.integers(0, cmp_ratio, b).astype(np.int32) if cmp_ratio > 1 else None)
    if layout_query == "TND":
        case.update(query=case["query"].reshape(b * s1, N1, D), weights=case["weights"].reshape(b * s1, N1),
                    actual_seq_lengths_query=np.arange(1, b + 1, dtype=np.int32) * s1, layout_query="TND")
    return device_case(case)


def bound_us(b: int, s1: int, s2: int, c: dict) -> tuple:
    """(bound, what): keys read once at HBM bandwidth vs the cube MACs at peak on every AIC."""
    hbm = b * s2 * D * 2 / c["kHbmBytesPerSecond"] * 1e6
    cube = b * s1 * N1 * s2 * D / (c["kCubeMacsPerCycle"] * MODEL_AICS * c["kClockGHz"] * 1e9) * 1e6
    return (hbm, "keys/HBM") if hbm >= cube else (cube, "cube")


def emulate(core, b: int, s1: int, s2: int, layout_query: str = "BSND", cmp_ratio: int = 1,
            sparse_count: int = K) -> tuple:
    """(report, wall seconds) of one emulated launch."""
    t0 = time.perf_counter()
    case = model_case(b, s1, s2, layout_query=layout_query, cmp_ratio=cmp_ratio, sparse_count=sparse_count)
    _, _, r = core.run_emu(**case, sparse_mode=3, order="in_order", soc=MODEL_SOC)
    return r, time.perf_counter() - t0


def modelled(max_keys: int, shapes) -> list:
    """Rows of the modelled table. A shape over max_keys keys is extrapolated along the line
    through the same B's two largest emulated S2 (a fixed part and a part per key); when only one
    S2 of that B was emulated, S2 / 2 is emulated too, for the line only."""
    core = load_native("ascend_ops.lightning_indexer", "core")
    c = timing_constants()
    done = {}  # (B, S1) -> {S2: report}
    rows = []
    for b, s1, s2, *layout in shapes:
        lq = layout[0] if layout else "BSND"
        ratio, k = layout[1:] if len(layout) > 1 else (1, K)
        bound, what = bound_us(b, s1, s2, c)
        label = f"{'decode' if s1 <= 2 else 'prefill'}{' TND' if lq == 'TND' else ''} B={b} S1={s1} S2={s2 // 1024}k"
        if ratio > 1:
            label = f"V4 {label} (r={ratio}, K={k})"
        runs = done.setdefault((b, s1, lq, ratio, k), {})
        if b * s2 <= max_keys:
            r, wall = emulate(core, b, s1, s2, lq, ratio, k)
            runs[s2] = r
            how, us, gm, label_bound = f"emulated ({wall:.0f} s)", r["modelled_us"], r["gm_bound_us"], r["bound"]
            busy = r["pipe_busy_max_us"]
        elif runs:
            if len(runs) == 1:
                (s_only,) = runs
                runs[s_only // 2] = emulate(core, b, s1, s_only // 2, lq, ratio, k)[0]
            (sa, ra), (sb, rb) = sorted(runs.items())[-2:]

            def line(key: str) -> float:
                return rb[key] + (rb[key] - ra[key]) / (sb - sa) * (s2 - sb)

            gm = line("gm_bound_us")
            us = max(line("modelled_us"), gm)  # the model's time is never below its memory bound
            label_bound = rb["bound"] if us > gm else "gm"
            how = f"extrapolated from S2={sa // 1024}k, {sb // 1024}k"
            busy = {k: v * us / rb["modelled_us"] for k, v in rb["pipe_busy_max_us"].items()}
        else:
            continue
        top = sorted(busy.items(), key=lambda kv: -kv[1])[:3]
        rows.append([label, how, f"{us:.1f}", f"{bound:.1f} ({what})", f"{us / bound:.2f}", f"{gm:.1f}", label_bound,
                     ", ".join(f"{k} {v:.0f}" for k, v in top)])
    return rows


def print_modelled(max_keys: int, quick: bool) -> None:
    shapes = MODEL_DECODE[:1] if quick else MODEL_DECODE + MODEL_ENGINE + MODEL_V4 + MODEL_PREFILL
    rows = modelled(max_keys, shapes)
    print()
    print(f"Modelled NPU time of the AscendC kernel ({MODEL_SOC} preset, emulator timing model; "
          f"N1={N1} D={D} K={K} bf16 PA_BSND/{BLOCK_SIZE}) - modelled, not run on NPU")
    print(format_table(["shape", "how", "modelled us", "bound us", "modelled / bound", "emu memory bound us",
                        "emu bound", "busiest pipes (us, busiest core)"], rows))
    print("target: modelled / bound <= 2 at decode")


def mindspore_calls() -> dict:
    """The PyNative call on tiny tensors (B=1, S1=1, S2=8, N1=N2=1, D=16, float16, K=2)."""
    import numpy as np
    import mindspore as ms  # before the adapter
    from ascend_ops.lightning_indexer import ms as li_ms

    query = ms.Tensor(np.ones((1, 1, 1, 16), np.float16))
    key = ms.Tensor(np.ones((1, 8, 1, 16), np.float16))
    weights = ms.Tensor(np.ones((1, 1, 1), np.float16))
    return {"lightning_indexer S2=8 D=16 K=2": lambda: li_ms.lightning_indexer(
        query, key, weights, layout_query="BSND", layout_key="BSND", sparse_count=2, sparse_mode=0)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the issue's decode shape and a small prefill, fewer samples")
    parser.add_argument("--out", type=Path, default=Path("bench-results"), help="CSV, JSON and PNG go here")
    parser.add_argument("--modelled", action="store_true", help="only the modelled NPU time table (emulator)")
    parser.add_argument("--cpu", action="store_true", help="only the CPU tables (no modelled NPU time)")
    parser.add_argument("--max-keys", type=int, default=8 * 32768,
                        help="emulate shapes with at most this many keys (B * S2); extrapolate the others")
    args = parser.parse_args(argv)
    if args.modelled:
        print_modelled(args.max_keys, quick=False)
        return 0

    shapes = QUICK_SHAPES if args.quick else SHAPES
    runner = bench.Runner(warmup=1, repeats=5 if args.quick else 7, min_time=0.0 if args.quick else 0.5,
                          max_repeats=50)
    results = cpu_tables(shapes, runner)

    if not args.quick and not args.cpu:
        print_modelled(args.max_keys, quick=False)

    import npu_sim  # bench/npu_sim.py: the npu path on the simulated Ascend runtime

    return bench.finish(OP, results, args.out, mindspore_calls=mindspore_calls, npu_sim_rows=npu_sim.rows,
                        quick=args.quick)


if __name__ == "__main__":
    sys.exit(main())
