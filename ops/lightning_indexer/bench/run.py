"""Benchmark of lightning_indexer (run by `./dev bench`).

Providers, timed in the same run on the same tensors (B=4, N1=64, D=128, sparse_count 2048,
bfloat16, PA_BSND keys in blocks of 128, sparse_mode 3):
  cpu           torch.ops.ascend_ops.lightning_indexer (the fused C++ CPU kernel)
  torch native  the same computation in PyTorch: einsum q.k, relu, weighted head sum,
                causal mask, topk (materialises [B, S1, N1, S2])
  matmul        torch.matmul of the same FLOPs in float32 ([S1*N1, D] x [D, S2] per batch, in
                column chunks of 8192): the machine's compute limit
Ratios: speedup = native p50 / cpu p50; matmul rate = matmul p50 / cpu p50.
Memory: the native way's [B, S1, N1, S2] bfloat16 product against the CPU kernel's extra
memory (its candidate lists and per-thread tiles, from its plan).
Targets (reported, not asserted): speedup >= 3 at decode and prefill, matmul rate >= 0.5 at
prefill, extra memory below the native intermediate.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
import torch  # noqa: E402

from ascend_ops.common import bench  # noqa: E402
from ascend_ops.common._table import format_table  # noqa: E402
from ascend_ops.common.loader import load_native  # noqa: E402
from ascend_ops.lightning_indexer import torch_ops  # noqa: E402,F401  (registers the op)

OP = "lightning_indexer"
B, N1, D, K, BLOCK_SIZE = 4, 64, 128, 2048, 128
SHAPES = [(1, 8192), (1, 32768), (128, 8192), (128, 32768)]  # (S1, S2)


def make_case(s1: int, s2: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    blocks = B * s2 // BLOCK_SIZE
    query = torch.randn(B, s1, N1, D, generator=g).to(torch.bfloat16)
    key = torch.randn(blocks, BLOCK_SIZE, 1, D, generator=g).to(torch.bfloat16)
    weights = torch.randn(B, s1, N1, generator=g).to(torch.bfloat16)
    block_table = torch.randperm(blocks, generator=g).view(B, -1).to(torch.int32)
    lengths = torch.full((B,), s2, dtype=torch.int32)
    return query, key, weights, block_table, lengths


def providers(query, key, weights, block_table, lengths):
    s1, s2 = query.shape[1], int(lengths[0])
    op = torch.ops.ascend_ops.lightning_indexer

    def cpu():
        return op(query, key, weights, actual_seq_lengths_key=lengths, block_table=block_table, sparse_count=K)

    # native: gather the paged keys, q.k, relu, weighted head sum, causal mask, topk
    rows = torch.arange(s1)[:, None]
    cols = torch.arange(s2)[None, :]
    mask = cols > (s2 - s1 + rows)  # sparse_mode 3

    def native():
        k = key[block_table.long()].view(B, s2, D)                      # [B, S2, D]
        scores = torch.einsum("bshd,btd->bsht", query, k).relu_()      # [B, S1, N1, S2]
        total = torch.einsum("bsht,bsh->bst", scores, weights)          # [B, S1, S2]
        total = total.float().masked_fill_(mask, float("-inf"))
        return total.topk(min(K, s2), dim=-1).indices.int()

    qf = query.float().view(B, s1 * N1, D)
    kf = key[block_table.long()].view(B, s2, D).float().transpose(1, 2).contiguous()  # [B, D, S2]
    chunk = 8192
    out = torch.empty(s1 * N1, chunk)

    def matmul():
        for b in range(B):
            for c in range(0, s2, chunk):
                torch.matmul(qf[b], kf[b, :, c:c + chunk], out=out)

    return {"cpu": cpu, "torch native": native, "matmul": matmul}


def extra_memory(query, key, weights, block_table, lengths) -> int:
    """Bytes the CPU kernel allocates beyond its outputs (from its plan): candidate lists of
    every work item (K entries of 8 bytes per row) plus, per thread, the float32 query rows of
    an item, a transposed key tile and 2K-entry running top-k buffers."""
    core = load_native("ascend_ops.lightning_indexer", "core")
    bits = lambda t: t.view(torch.int16).numpy().view("uint16")  # noqa: E731
    plan = core.cpu_plan(bits(query), bits(key), bits(weights), None, lengths.numpy(), block_table.numpy(),
                         "BSND", "PA_BSND", K, 3, "bfloat16")
    s1, s2 = query.shape[1], int(lengths[0])
    chunks = -(-s2 // plan["key_chunk"])
    rows = plan["row_block"]
    cands = B * s1 * chunks * K * 8
    per_thread = rows * N1 * D * 4 + D * plan["key_tile"] * 4 + rows * 2 * K * 8
    return cands + plan["threads"] * per_thread


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="S2 = 8k only, fewer samples (smoke run)")
    parser.add_argument("--out", type=Path, default=Path("bench-results"), help="CSV, JSON and PNG go here")
    args = parser.parse_args(argv)

    shapes = [s for s in SHAPES if s[1] == 8192] if args.quick else SHAPES
    runner = bench.Runner(warmup=1, repeats=3, min_time=0.0 if args.quick else 0.5, max_repeats=10)
    results, memory = [], []
    for s1, s2 in shapes:
        tensors = make_case(s1, s2)
        label = f"S1={s1} S2={s2} B={B} N1={N1} D={D} K={K}"
        cases = [bench.Case(OP, provider, label, "bfloat16", fn) for provider, fn in providers(*tensors).items()]
        results += runner.run(cases, baseline="torch native")  # one shape at a time: native's memory
        native_bytes = B * s1 * N1 * s2 * 2
        memory.append([label, native_bytes / 2**20, extra_memory(*tensors) / 2**20])
    bench.print_table(results)

    by_key = {(r.shape, r.provider): r for r in results}
    rows = []
    for (shape, provider), r in by_key.items():
        if provider != "cpu":
            continue
        flops = 2 * B * int(shape.split()[0][3:]) * N1 * int(shape.split()[1][3:]) * D
        native = by_key[(shape, "torch native")].p50_us
        mm = by_key[(shape, "matmul")].p50_us
        rows.append([shape, r.p50_us / 1e3, flops / r.p50_us / 1e3, native / r.p50_us, mm / r.p50_us])
    print()
    print(format_table(["shape", "cpu p50 ms", "cpu GFLOP/s", "speedup vs native", "matmul rate"], rows))
    print("targets: speedup vs native >= 3 (decode and prefill); matmul rate >= 0.5 at prefill (S1=128)")
    print()
    print(format_table(["shape", "native [B,S1,N1,S2] MiB", "cpu extra MiB"], memory))
    print("target: cpu extra memory below the native intermediate")

    args.out.mkdir(parents=True, exist_ok=True)
    bench.write_csv(results, args.out / f"{OP}.csv")
    bench.write_json(results, args.out / f"{OP}.json")
    bench.plot(results, args.out / f"{OP}.png", metric="speedup", logy=True)
    print(f"\nresults: {args.out}/{OP}.csv, .json, .png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
