"""Benchmark of sparse_flash_attention (run by `./dev bench`).

CPU: providers timed back to back on the same tensors (D = 512 + 64, K = 2048, bfloat16, PA_BSND
blocks of 128, value = key, sparse_mode 3, every row 2048 distinct positions of its window),
one shape at a time:
  cpu              torch.ops.ascend_ops.sparse_flash_attention (the C++ CPU kernel)
  torch composite  what an engine would write: the selected rows gathered by index through the
                   block table ([rows, K, D] and [rows, K, Dr]), q.k^T + q_rope.k_rope^T in
                   bfloat16 matmuls, softmax in float32, the probabilities as bfloat16 times
                   the gathered latent rows (valid indices only: no -1 or window masking)
  matmul bf16      torch.matmul of the same FLOPs in bfloat16 on rows gathered beforehand
                   ([N1, D + Dr] x [D + Dr, K] and [N1, K] x [K, D] per query row, batched):
                   the machine's bfloat16 compute rate as PyTorch reaches it
  copy             a copy of a 256 MiB tensor: the memory bandwidth (bytes read + written)
The cache is realistic: CACHE_BYTES (256 MiB of latent + rope rows, 8x this machine's 32 MiB
L3) of blocks, of which each batch uses KV_LEN / 128 at random places (a shuffled block table),
so the selected rows come from memory, not from the CPU's caches.
Ratios: speedup = composite p50 / cpu p50; memory bound = gathered bytes (rows * K * (D + Dr) *
2: each selected latent row read once as K and V) at the measured copy bandwidth, memory
fraction = bound / cpu p50; matmul fraction = matmul p50 / cpu p50. Issue 29's target (decode
B=4, N1=128): speedup >= 5 and max(memory fraction, matmul fraction) >= 0.5 (the slower of the
two references). The load average is printed with each shape (2 shared cores are noisy); a
second table gives the ratios from process CPU time per call (all threads), which other
processes on the cores hardly move.

Modelled NPU time (bench/npu_sim.py's print_modelled(), skipped with --quick / --cpu-only):
the AscendC kernel run by the emulator on the Ascend910B2 preset. A model, not a measurement.
"""
from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path

import numpy as np

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
# Threads that finish a parallel region sleep instead of spinning (all providers alike), as in
# lightning_indexer's bench: spinning threads on shared cores mostly measure the scheduler.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
import torch  # noqa: E402

from ascend_ops.common.table import format_table  # noqa: E402
from ascend_ops.devkit import bench  # noqa: E402
from ascend_ops.sparse_flash_attention import torch_ops  # noqa: E402,F401  (registers the op)

OP = "sparse_flash_attention"
D, DR, K, BLOCK_SIZE, KV_LEN = 512, 64, 2048, 128, 16384
CACHE_BYTES = 256 << 20
COPY_BYTES = 256 << 20
# (label, B, S1, N1, layout_query)
ISSUE_DECODE = ("decode", 4, 1, 128, "BSND")
SHAPES = [ISSUE_DECODE, ("decode", 4, 1, 32, "BSND"), ("prefill", 1, 64, 128, "TND")]
QUICK_SHAPES = [ISSUE_DECODE, ("decode", 4, 1, 32, "BSND")]
TARGET_SPEEDUP, TARGET_FRACTION = 5.0, 0.5


def make_case(b: int, s1: int, n1: int, layout: str, seed: int = 0) -> dict:
    """Keyword arguments of the op: a cache of CACHE_BYTES, the used blocks shuffled, every row
    K distinct positions of its causal window (sparse_mode 3)."""
    g = torch.Generator().manual_seed(seed)
    per_batch = KV_LEN // BLOCK_SIZE
    blocks = max(b * per_batch, CACHE_BYTES // (BLOCK_SIZE * (D + DR) * 2))
    key = torch.randn(blocks, BLOCK_SIZE, 1, D, generator=g).to(torch.bfloat16)
    key_rope = torch.randn(blocks, BLOCK_SIZE, 1, DR, generator=g).to(torch.bfloat16)
    table = torch.randperm(blocks, generator=g)[:b * per_batch].view(b, per_batch).to(torch.int32)
    idx = torch.empty(b, s1, 1, K, dtype=torch.int32)
    for i in range(b):
        for r in range(s1):
            visible = KV_LEN - s1 + r + 1
            idx[i, r, 0] = torch.randperm(visible, generator=g)[:K].to(torch.int32)
    query = torch.randn(b, s1, n1, D, generator=g).to(torch.bfloat16)
    query_rope = torch.randn(b, s1, n1, DR, generator=g).to(torch.bfloat16)
    case = dict(query=query, key=key, value=key, sparse_indices=idx, scale_value=float(1 / np.sqrt(D + DR)),
                block_table=table, actual_seq_lengths_kv=torch.full((b,), KV_LEN, dtype=torch.int32),
                query_rope=query_rope, key_rope=key_rope, layout_query="BSND", layout_kv="PA_BSND", sparse_mode=3)
    if layout == "TND":
        case.update(query=query.reshape(b * s1, n1, D), query_rope=query_rope.reshape(b * s1, n1, DR),
                    sparse_indices=idx.reshape(b * s1, 1, K), layout_query="TND",
                    actual_seq_lengths_query=torch.arange(1, b + 1, dtype=torch.int32) * s1)
    return case


def flat_slots(case: dict, b: int, s1: int) -> torch.Tensor:
    """[rows, K] cache rows (block * BLOCK_SIZE + slot) of every row's selected positions."""
    idx = case["sparse_indices"].reshape(b, s1, K).long()
    table = case["block_table"].long()
    blocks = torch.gather(table[:, None, :].expand(b, s1, -1), 2, idx // BLOCK_SIZE)
    return (blocks * BLOCK_SIZE + idx % BLOCK_SIZE).reshape(b * s1, K)


def providers(case: dict, b: int, s1: int, n1: int) -> dict:
    op = torch.ops.ascend_ops.sparse_flash_attention
    rows = b * s1
    kwargs = {k: v for k, v in case.items() if k not in ("query", "key", "value", "sparse_indices", "scale_value")}

    def cpu():
        return op(case["query"], case["key"], case["value"], case["sparse_indices"], case["scale_value"], **kwargs)

    latent = case["key"].view(-1, D)
    rope = case["key_rope"].view(-1, DR)
    q = case["query"].reshape(rows, n1, D)
    qr = case["query_rope"].reshape(rows, n1, DR)
    scale = case["scale_value"]

    def composite():
        slots = flat_slots(case, b, s1)                       # through the block table
        kv = latent[slots]                                    # [rows, K, D]  (K and V)
        kr = rope[slots]                                      # [rows, K, Dr]
        scores = torch.matmul(q, kv.transpose(1, 2)) + torch.matmul(qr, kr.transpose(1, 2))  # [rows, N1, K]
        p = torch.softmax(scores.float() * scale, dim=-1).to(torch.bfloat16)
        return torch.matmul(p, kv)                            # [rows, N1, D]

    slots = flat_slots(case, b, s1)
    qf = torch.cat([q, qr], dim=-1)                           # [rows, N1, D + Dr]
    kf_t = torch.cat([latent[slots], rope[slots]], dim=-1).transpose(1, 2).contiguous()  # [rows, D + Dr, K]
    vg = latent[slots].contiguous()                           # [rows, K, D]
    pg = torch.randn(rows, n1, K).to(torch.bfloat16)
    s_out = torch.empty(rows, n1, K, dtype=torch.bfloat16)
    o_out = torch.empty(rows, n1, D, dtype=torch.bfloat16)

    def matmul():
        torch.matmul(qf, kf_t, out=s_out)
        torch.matmul(pg, vg, out=o_out)

    return {"cpu": cpu, "torch composite": composite, "matmul bf16": matmul}


def copy_provider():
    src = torch.ones(COPY_BYTES, dtype=torch.uint8)
    dst = torch.empty_like(src)
    return lambda: dst.copy_(src)


def check_agree(fns: dict) -> float:
    """Max |cpu - composite| / max |composite| (a sanity check that both compute the same)."""
    got, want = fns["cpu"]()[0].float(), fns["torch composite"]().float()
    return float((got.reshape(want.shape) - want).abs().max() / want.abs().max())


def cpu_tables(shapes, runner) -> list:
    results, summary, cpu_time = [], [], []
    copy_case = bench.Case(OP, "copy", f"{COPY_BYTES >> 20} MiB", "uint8", copy_provider(),
                           bytes_moved=2 * COPY_BYTES)
    for kind, b, s1, n1, layout in shapes:
        case = make_case(b, s1, n1, layout)
        label = f"{kind} {layout} B={b} S1={s1} N1={n1} K={K}"
        before = bench.load_average()
        fns = providers(case, b, s1, n1)
        agree = check_agree(fns)
        cases = [bench.Case(OP, provider, label, "bfloat16", fn) for provider, fn in fns.items()]
        shape_results = runner.run(cases, baseline="torch composite")
        cpu_ms = {provider: bench.cpu_time_ms(fn) for provider, fn in fns.items()}
        copy = runner.run([copy_case])[0]
        results += shape_results + [copy]
        by = {r.provider: r for r in shape_results}
        rows = b * s1
        cpu_us = by["cpu"].p50_us
        gathered = rows * K * (D + DR) * 2
        bound_us = gathered / copy.gbps / 1e3
        flops = 2 * rows * n1 * K * (D + DR + D)
        mem_frac, mm_frac = bound_us / cpu_us, by["matmul bf16"].p50_us / cpu_us
        speedup = by["torch composite"].p50_us / cpu_us
        summary.append([label, f"{cpu_us / 1e3:.2f}", f"{by['torch composite'].p50_us / 1e3:.2f}", f"{speedup:.1f}",
                        f"{flops / cpu_us / 1e3:.0f}", f"{by['matmul bf16'].p50_us / 1e3:.2f}", f"{mm_frac:.2f}",
                        f"{copy.gbps:.1f}", f"{bound_us / 1e3:.2f}", f"{mem_frac:.2f}", f"{agree:.1e}",
                        f"{before} -> {bench.load_average()}"])
        cpu_time.append([label, f"{cpu_ms['cpu']:.2f}", f"{cpu_ms['torch composite']:.2f}",
                         f"{cpu_ms['torch composite'] / cpu_ms['cpu']:.1f}",
                         f"{cpu_ms['matmul bf16'] / cpu_ms['cpu']:.2f}"])
        if (kind, b, s1, n1, layout) == ISSUE_DECODE:
            # "of the memory bound or of the matmul time, whichever is slower": the larger time
            slower, frac = ("matmul", mm_frac) if mm_frac >= mem_frac else ("memory bound", mem_frac)
            target = (f"issue 29 target ({label}): speedup vs composite {speedup:.1f} (>= {TARGET_SPEEDUP:g}: "
                      f"{'met' if speedup >= TARGET_SPEEDUP else 'NOT met'}); fraction of the slower reference "
                      f"({slower}) {frac:.2f} (>= {TARGET_FRACTION:g}: "
                      f"{'met' if frac >= TARGET_FRACTION else 'NOT met'})")
        del case, fns
    bench.print_table(results)
    print()
    print(format_table(["shape", "cpu p50 ms", "composite p50 ms", "speedup vs composite", "cpu GFLOP/s",
                        "matmul bf16 p50 ms", "matmul fraction", "copy GB/s", "memory bound ms", "memory fraction",
                        "cpu vs composite rel. diff", "load 1-min"], summary))
    print(target)
    print()
    print(format_table(["shape", "cpu CPU-time ms", "composite CPU-time ms", "CPU-time speedup",
                        "CPU-time matmul fraction"], cpu_time))
    print("process CPU time per call, all threads (least of 3 rounds): the same ratios, less sensitive to load")
    return results


def mindspore_calls() -> dict:
    """The PyNative call on tiny tensors (B=1, S1=1, N1=1, D=16, Dr=8, BSND key of 8 rows, K=2, float16)."""
    import mindspore as ms  # before the adapter
    from ascend_ops.sparse_flash_attention import ms as sfa_ms

    query = ms.Tensor(np.ones((1, 1, 1, 16), np.float16))
    query_rope = ms.Tensor(np.ones((1, 1, 1, 8), np.float16))
    key = ms.Tensor(np.ones((1, 8, 1, 16), np.float16))
    key_rope = ms.Tensor(np.ones((1, 8, 1, 8), np.float16))
    indices = ms.Tensor(np.array([[[[0, 3]]]], np.int32))
    return {"sparse_flash_attention D=16 K=2": lambda: sfa_ms.sparse_flash_attention(
        query, key, key, indices, 0.25, query_rope=query_rope, key_rope=key_rope, layout_query="BSND",
        layout_kv="BSND", sparse_mode=0)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the decode shapes only, fewer samples, no NPU model")
    parser.add_argument("--cpu-only", action="store_true", help="the CPU tables only (no modelled NPU time)")
    parser.add_argument("--out", type=Path, default=Path("bench-results"), help="CSV, JSON and PNG go here")
    args = parser.parse_args(argv)

    print(f"threads {torch.get_num_threads()}, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    shapes = QUICK_SHAPES if args.quick else SHAPES
    runner = bench.Runner(warmup=1, repeats=5 if args.quick else 7, min_time=0.0 if args.quick else 0.5,
                          max_repeats=30)
    results = cpu_tables(shapes, runner)

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    try:
        import npu_sim  # bench/npu_sim.py: modelled NPU time and the npu path on the simulated runtime
    except Exception as e:  # owned by the kernel's engineer: say why, keep the CPU figures
        print(f"\nbench/npu_sim.py could not be imported ({type(e).__name__}: {e})")
        traceback.print_exc()
        npu_sim = None
    if npu_sim is not None and not (args.quick or args.cpu_only):
        try:
            npu_sim.print_modelled()
        except Exception as e:
            print(f"\nmodelled NPU time: npu_sim.print_modelled() failed ({type(e).__name__}: {e})")
            traceback.print_exc()
    return bench.finish(OP, results, args.out, mindspore_calls=mindspore_calls,
                        npu_sim_rows=npu_sim.rows if npu_sim is not None else list, quick=args.quick)


if __name__ == "__main__":
    sys.exit(main())
