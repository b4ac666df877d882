"""The CPU kernel against our unquantised write (issue 30: within 1.5x at T >= 4096), printed by
bench/run.py; also runs alone.

Split int8 codes + float16 scales from bfloat16 k [T, 128] (qbs 128) into a cache of 2^19 slots
(64 MiB of codes); the unquantised write is reshape_and_cache key-only of the same k into a
bfloat16 cache of as many slots (128 MiB). Both far larger than the L3. Slots: shuffled whole
blocks, 1 in 16 decode tokens padding; "fresh" cycles through slot sets so that every call writes
rows that are not in the CPU caches (as a real step does), "same" writes the same slots each call
(the rows stay cached between calls at small T). Others compile on this machine: providers are timed
in interleaved rounds and each one's minimum over the rounds of its p50 is kept.
"""
from __future__ import annotations

import argparse
import itertools
import os
import sys

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
import torch  # noqa: E402

from ascend_ops.devkit import bench  # noqa: E402
from ascend_ops.common.table import format_table  # noqa: E402
from ascend_ops.indexer_k_quant_and_cache import torch_ops  # noqa: E402,F401

D, QBS, BLOCK_SIZE, NUM_BLOCKS = 128, 128, 64, 8192
FRESH_BYTES = 256 << 20
HEADERS = ["T", "slots", "cpu µs", "unquantised write µs", "cpu / unquantised", "plain copy µs"]


def slot_sets(tokens: int, fresh: bool, seed: int = 0) -> list:
    g = torch.Generator().manual_seed(seed)
    count = max(2, min(1024, FRESH_BYTES // (tokens * D * 2))) if fresh else 1
    sets = []
    for _ in range(count):
        blocks = torch.randperm(NUM_BLOCKS, generator=g)[: -(-tokens // BLOCK_SIZE)]
        slots = (blocks[:, None] * BLOCK_SIZE + torch.arange(BLOCK_SIZE)).flatten()[:tokens].clone()
        if tokens <= 256:
            slots[15::16] = -1  # the 16th of every 16 tokens (none below 16)
        sets.append(slots)
    return sets


def rows(tokens_list=(16, 256, 4096), rounds: int = 5) -> list:
    import ascend_ops.reshape_and_cache  # noqa: F401  (registers torch.ops.ascend_ops.reshape_and_cache)

    op = torch.ops.ascend_ops.indexer_k_quant_and_cache
    rac = torch.ops.ascend_ops.reshape_and_cache
    cache = torch.zeros(NUM_BLOCKS, BLOCK_SIZE, 1, D, dtype=torch.int8)
    scales = torch.zeros(NUM_BLOCKS, BLOCK_SIZE, 1, D // QBS, dtype=torch.float16)
    plain_cache = torch.zeros(NUM_BLOCKS, BLOCK_SIZE, 1, D, dtype=torch.bfloat16)
    runner = bench.Runner(warmup=2, repeats=9, min_time=0.1, max_repeats=400)
    out = []
    for tokens in tokens_list:
        k = (torch.randn(tokens, D, generator=torch.Generator().manual_seed(tokens)) * 2).to(torch.bfloat16)
        copy = torch.empty_like(k)
        for fresh in (True, False):
            sets = slot_sets(tokens, fresh)
            a, b = itertools.cycle(sets), itertools.cycle(sets)
            fns = {"cpu": lambda: op(k, cache, next(a), k_scale_cache=scales, quant_block_size=QBS),
                   "unquantised": lambda: rac(k.view(-1, 1, D), None, plain_cache, None, next(b)),
                   "copy": lambda: copy.copy_(k)}
            best = {name: float("inf") for name in fns}
            for _ in range(rounds):
                for name, fn in fns.items():
                    best[name] = min(best[name], runner.measure(fn).median)
            out.append([tokens, "fresh" if fresh else "same", best["cpu"], best["unquantised"],
                        best["cpu"] / best["unquantised"], best["copy"]])
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, nargs="*", default=[16, 256, 4096])
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args(argv)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    print(f"indexer_k_quant_and_cache CPU vs the unquantised write, torch threads {torch.get_num_threads()}, "
          f"min over {args.rounds} interleaved rounds of p50")
    print(format_table(HEADERS, rows(tuple(args.tokens), args.rounds)))
    print("target: cpu / unquantised <= 1.5 at T >= 4096")
    return 0


if __name__ == "__main__":
    sys.exit(main())
