"""Benchmark of indexer_k_quant_and_cache (run by `./dev bench`).

Providers, timed in the same run on the same tensors (split int8 layout, D = qbs = 128, bfloat16
k, float16 scale cache: the vllm-ascend A2 / A3 indexer cache; caches of 2^19 slots, 64 MiB of
codes, far bigger than the CPU caches, written at shuffled slots):
  cpu            torch.ops.ascend_ops.indexer_k_quant_and_cache (the C++ CPU kernel, one pass)
  torch composite  what a user writes today: amax, div, round, clamp, to(int8), then index_put of
                 the codes and of the scales (padding masked)
  plain copy     copy_ of k's bytes into a contiguous buffer: the memory-bandwidth yardstick
  unquantised write  reshape_and_cache key-only of the same k into a bfloat16 cache of the same
                 slots (when ascend-op-reshape-and-cache is installed): the issue's yardstick
                 (bytes read the same, bytes written twice ours)
Ratios: speedup = composite p50 / cpu p50 (target >= 3 at T = 16..256 and 4096); cpu p50 /
unquantised-write p50 (target <= 1.5 at T >= 4096). The fused fp8 layout (cpu) is timed too.
Also the emulator's GM traffic for the AscendC kernel against the minimum T' * D * 2 (k) +
T' * (D + 2) (codes + float16 scale) + T' * slot bytes (target <= 1.05), and its timing model.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
import torch  # noqa: E402

from ascend_ops.devkit import bench  # noqa: E402
from ascend_ops.common.table import format_table  # noqa: E402
from ascend_ops.indexer_k_quant_and_cache import indexer_k_quant_and_cache, torch_ops  # noqa: E402,F401

OP = "indexer_k_quant_and_cache"
D, QBS, BLOCK_SIZE = 128, 128, 64
NUM_BLOCKS = 8192  # 2^19 slots: 64 MiB of int8 codes
DECODE = (16, 64, 256)
PREFILL = (4096,)


def make_case(tokens: int, seed: int = 0, num_blocks: int = NUM_BLOCKS):
    """k, k_cache, slots, k_scale_cache: slots are whole blocks in a shuffled order (as a block
    manager hands them out), 1 in 16 decode tokens padding."""
    g = torch.Generator().manual_seed(seed)
    k = (torch.randn(tokens, D, generator=g) * 2).to(torch.bfloat16)
    cache = torch.zeros(num_blocks, BLOCK_SIZE, 1, D, dtype=torch.int8)
    scales = torch.zeros(num_blocks, BLOCK_SIZE, 1, D // QBS, dtype=torch.float16)
    blocks = torch.randperm(num_blocks, generator=g)
    slots = (blocks[:, None] * BLOCK_SIZE + torch.arange(BLOCK_SIZE)).flatten()[:tokens].clone()
    if tokens <= max(DECODE):
        slots[15::16] = -1  # the 16th of every 16 tokens (none below 16)
    return k, cache, slots.to(torch.int64), scales


def providers(k, cache, slots, scales):
    op = torch.ops.ascend_ops.indexer_k_quant_and_cache
    flat_codes = cache.view(-1, D)
    flat_scales = scales.view(-1, D // QBS)
    copy = torch.empty_like(k)
    fused = torch.zeros(NUM_BLOCKS, BLOCK_SIZE, D + 4 * (D // QBS), dtype=torch.uint8)

    def composite():
        valid = slots >= 0
        x = k[valid].float().view(-1, D // QBS, QBS)
        amax = x.abs().amax(dim=2, keepdim=True)
        sc = torch.where(amax == 0, torch.ones_like(amax), amax / 127)
        q = torch.round(x / sc).clamp_(-128, 127).to(torch.int8)
        index = slots[valid]
        flat_codes[index] = q.view(-1, D)
        flat_scales[index] = sc.view(-1, D // QBS).to(torch.float16)

    found = {}
    try:
        import ascend_ops.reshape_and_cache  # noqa: F401  (registers torch.ops.ascend_ops.reshape_and_cache)

        plain_cache = torch.zeros(NUM_BLOCKS, BLOCK_SIZE, 1, D, dtype=k.dtype)
        rac = torch.ops.ascend_ops.reshape_and_cache
        found["unquantised write"] = lambda: rac(k.view(-1, 1, D), None, plain_cache, None, slots)
    except ImportError:
        pass
    return {
        **found,
        "cpu": lambda: op(k, cache, slots, k_scale_cache=scales, quant_block_size=QBS),
        "torch composite": composite,
        "plain copy": lambda: copy.copy_(k),
        "cpu fused fp8": lambda: op(k, fused, slots, quant_block_size=QBS, scale_fmt="ue8m0"),
    }


def emulator_model(tokens: int, soc: str) -> list:
    """The AscendC kernel through the emulator: GM bytes moved against the minimum, and the
    timing model's 910B time against the time to move only the minimum."""
    k, cache, slots, scales = make_case(tokens, num_blocks=max(4, 2 * tokens // BLOCK_SIZE + 2))
    kn = k.view(torch.int16).numpy().view(np.uint16)
    report = indexer_k_quant_and_cache(kn, cache.numpy(), slots.numpy(), k_scale_cache=scales.numpy(),
                                       quant_block_size=QBS, backend="emu", soc=soc, order="in_order",
                                       dtype="bfloat16")
    written = int((slots >= 0).sum())
    minimum = written * D * 2 + written * (D + 2 * (D // QBS)) + len(slots) * 8
    return bench.modelled_row(f"T={tokens} bf16 -> int8 + f16", soc, report, minimum)


def unquantised_model(tokens: int, soc: str):
    """The modelled time of reshape_and_cache key-only on the same k (float16, same slots), or None."""
    try:
        from ascend_ops.reshape_and_cache import reshape_and_cache
    except ImportError:
        return None
    k, _, slots, _ = make_case(tokens, num_blocks=max(4, 2 * tokens // BLOCK_SIZE + 2))
    cache = np.zeros((max(4, 2 * tokens // BLOCK_SIZE + 2), BLOCK_SIZE, 1, D), np.float16)
    report = reshape_and_cache(k.float().numpy().astype(np.float16).reshape(-1, 1, D), None, cache, None,
                               slots.numpy(), backend="emu", soc=soc, order="in_order")
    return report["modelled_us"]


def mindspore_calls() -> dict:
    """The PyNative call on tiny tensors (one token, D = 32), for the call cost."""
    import mindspore as ms  # before the adapter
    from ascend_ops.indexer_k_quant_and_cache import ms as ikq_ms

    k = ms.Tensor(np.ones((1, 32), np.float16))
    cache = ms.Tensor(np.zeros((2, 4, 1, 32), np.int8))
    scales = ms.Tensor(np.zeros((2, 4, 1, 1), np.float16))
    slots = ms.Tensor(np.array([3], np.int64))
    return {"indexer_k_quant_and_cache T=1 D=32": lambda: ikq_ms.indexer_k_quant_and_cache(k, cache, slots, scales, 32)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer shapes and samples (smoke run)")
    parser.add_argument("--out", type=Path, default=Path("bench-results"), help="CSV, JSON and PNG go here")
    parser.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: torch's default)")
    args = parser.parse_args(argv)
    if args.threads > 0:
        torch.set_num_threads(args.threads)

    shapes = (16, 4096) if args.quick else DECODE + PREFILL
    runner = bench.Runner(warmup=2, repeats=5 if args.quick else 15, min_time=0.05 if args.quick else 0.3)
    cases = []
    for tokens in shapes:
        tensors = make_case(tokens)
        nbytes = tensors[0].nbytes + tokens * (D + 2 * (D // QBS))  # read k once, write codes + scales once
        for provider, fn in providers(*tensors).items():
            cases.append(bench.Case(OP, provider, f"T={tokens} D={D}", "bfloat16", fn, nbytes))
    results = runner.run(cases, baseline="torch composite")
    bench.print_table(results)

    by_key = {(r.shape, r.provider): r for r in results}
    rows = []
    for (shape, provider), r in by_key.items():
        if provider not in ("cpu", "cpu fused fp8"):
            continue
        composite = by_key[(shape, "torch composite")].p50_us
        copy = by_key[(shape, "plain copy")].p50_us
        plain = by_key.get((shape, "unquantised write"))
        rows.append([shape, provider, r.p50_us, composite / r.p50_us, r.p50_us / copy,
                     r.p50_us / plain.p50_us if plain else float("nan")])
    print()
    print(format_table(["shape", "provider", "p50 µs", "speedup vs composite", "time / plain copy",
                        "time / unquantised write"], rows))
    print("targets: speedup vs composite >= 3 (split int8, T = 16..256 and 4096); "
          "time / unquantised write <= 1.5 at T = 4096")

    import cpu_speed  # bench/cpu_speed.py: fresh and repeated slots, min over interleaved rounds

    print()
    try:
        import ascend_ops.reshape_and_cache  # noqa: F401  (the yardstick)
    except ImportError as error:
        print(f"cpu / unquantised write table skipped: {error}")
    else:
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        print(format_table(cpu_speed.HEADERS, cpu_speed.rows((16, 4096) if args.quick else (16, 256, 4096),
                                                             2 if args.quick else 5)))
        torch.set_num_threads(threads)
        print("one torch thread, min over interleaved rounds of p50; target: cpu / unquantised <= 1.5 at T >= 4096")

    print()
    model = [emulator_model(t, soc) for t in ((64,) if args.quick else (16, 256, 4096))
             for soc in ("Ascend910B2", "Ascend910B4")]
    print(format_table(bench.MODELLED_HEADERS, model))
    plain = [[row[0], row[1], row[5], unquantised_model(t, row[1])] for row, t in
             zip(model, [t for t in ((64,) if args.quick else (16, 256, 4096)) for _ in range(2)])]
    if all(p[3] is not None for p in plain):
        print()
        print(format_table(["shape", "soc", "modelled µs", "unquantised write modelled µs", "ratio"],
                           [p + [p[2] / p[3]] for p in plain]))
        print("target: within 1.5 x the unquantised write (reshape_and_cache key-only, same T, D = 128)")
    print("GM bytes: emulator counters, target <= 1.05 x minimum. modelled µs: the emulator's timing model "
          "of a 910B (modelled, not run on NPU)")

    import npu_sim  # bench/npu_sim.py: the npu path on the simulated Ascend runtime

    return bench.finish(OP, results, args.out, mindspore_calls=mindspore_calls, npu_sim_rows=npu_sim.rows,
                        quick=args.quick)


if __name__ == "__main__":
    sys.exit(main())
