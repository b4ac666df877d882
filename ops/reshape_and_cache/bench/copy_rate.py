"""The CPU copy rate of reshape_and_cache (printed by bench/run.py; also runs alone).

copy rate = plain-copy time / our time, where the plain copy is `copy_` of the same key and value
bytes into contiguous buffers in the same cache state as our destination rows (the memory-bandwidth
limit of moving them); speedup = native time / our time, native being
`key_cache.view(-1, H, D)[slots] = key` with padding masked (key and value).

Conditions (issue 34): H = 8, D = 128, bfloat16 and float16; K and V caches of NUM_BLOCKS blocks
of 128 slots (256 MiB each, far larger than the L3); blocks in a shuffled order, 1 in 16 decode
tokens padding. Three slot patterns:
- "decode" (decode T only): what an engine's decode steps write. Each of the T sequences owns its
  own shuffled blocks and every call writes its next position (slot + 1; the next of its blocks
  after 128 steps): new rows every call, next to the rows the previous call wrote.
- "fresh": every call writes a new random set of slots (a random offset in a random block per
  token), so every row lands on a page no recent call touched (each row walks the page table).
- "same": every call writes the same slots (the pattern of the earlier benchmark: at small T the
  rows stay cached between calls; engines do not rewrite last step's slots).
"decode" and "fresh" cycle through enough sets that the rows a set writes have left the CPU
caches when it comes round again. The plain copy follows the pattern: with "decode" and "fresh"
slots each call copies into the next of as many contiguous buffers (their lines have left the
caches too, as our rows' have), with "same" into the same buffers every call. "hot copy" is the
copy into the same buffers every call in every pattern (the cache's bandwidth, not the memory's,
at small T), printed beside it for reference.

Others compile on this machine: the providers are timed in interleaved rounds (each round: each
provider's p50 over its samples), and the table takes each provider's minimum over the rounds.
"""
from __future__ import annotations

import argparse
import datetime
import itertools
import os
import platform
import sys

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
import torch  # noqa: E402

from ascend_ops.devkit import bench  # noqa: E402
from ascend_ops.common.table import format_table  # noqa: E402
from ascend_ops.reshape_and_cache import torch_ops  # noqa: E402,F401  (registers the op)

H, D, BLOCK_SIZE = 8, 128, 128
NUM_BLOCKS = 1024  # 256 MiB per bfloat16 / float16 cache
DECODE = (1, 4, 16, 64, 256)
PREFILL = (4096, 16384, 32768)
DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16}
FRESH_BYTES = 256 << 20  # the slot sets of one shape together write at least this many bytes
HEADERS = ["T", "dtype", "slots", "cpu µs", "native µs", "plain copy µs", "copy rate", "speedup vs native",
           "hot copy µs", "hot copy / cpu"]


def machine() -> str:
    """The host name and CPU model, for the table's heading."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    except OSError:
        pass
    return f"{platform.node()} ({model}, {os.cpu_count()} CPUs)"


def caches(dtype: torch.dtype):
    key_cache = torch.zeros(NUM_BLOCKS, BLOCK_SIZE, H, D, dtype=dtype)
    return key_cache, torch.zeros_like(key_cache)


PATTERNS = ("decode", "fresh", "same")


def slot_sets(tokens: int, pattern: str = "fresh", seed: int = 0) -> list:
    """int64 slot tensors of `tokens` slots each ("same": one), as many as keep each set's rows out
    of the CPU caches until it is used again. Decode T, "fresh" / "same": one random block and
    offset per token; "decode": every sequence's next position; 1 in 16 padding. Prefill: whole
    blocks in a shuffled order."""
    g = torch.Generator().manual_seed(seed)
    row_bytes = 2 * H * D * 2
    count = max(2, min(1 << 16, FRESH_BYTES // (tokens * row_bytes))) if pattern != "same" else 1
    if pattern == "decode":
        return decode_steps(tokens, count, g)
    sets = []
    for _ in range(count):
        if tokens <= max(DECODE):  # decode: one token per sequence, each in its own block
            blocks = torch.randperm(NUM_BLOCKS, generator=g)[:tokens]
            slots = blocks * BLOCK_SIZE + torch.randint(BLOCK_SIZE, (tokens,), generator=g)
            slots[15::16] = -1  # the 16th of every 16 tokens (none below 16)
        else:  # prefill: whole blocks in a shuffled order
            blocks = torch.randperm(NUM_BLOCKS, generator=g)[: -(-tokens // BLOCK_SIZE)]
            slots = (blocks[:, None] * BLOCK_SIZE + torch.arange(BLOCK_SIZE)).flatten()[:tokens].clone()
        sets.append(slots)
    return sets


def decode_steps(tokens: int, steps: int, g: torch.Generator) -> list:
    """`steps` consecutive decode steps of `tokens` sequences: sequence i owns NUM_BLOCKS // tokens
    of the shuffled blocks and starts at a random position of them; step n writes position start + n
    (its block's next slot, the next owned block after the last slot)."""
    assert tokens <= max(DECODE), "the decode pattern is for decode T"
    owned = NUM_BLOCKS // tokens
    blocks = torch.randperm(NUM_BLOCKS, generator=g)[: owned * tokens].view(tokens, owned)
    start = torch.randint(owned * BLOCK_SIZE, (tokens,), generator=g)
    rows = torch.arange(tokens)
    sets = []
    for n in range(steps):
        position = (start + n) % (owned * BLOCK_SIZE)
        slots = blocks[rows, position // BLOCK_SIZE] * BLOCK_SIZE + position % BLOCK_SIZE
        slots[15::16] = -1  # the 16th of every 16 tokens (none below 16)
        sets.append(slots)
    return sets


def providers(tokens: int, dtype: torch.dtype, key_cache, value_cache, pattern: str, seed: int = 0) -> dict:
    g = torch.Generator().manual_seed(seed)
    key = torch.randn(tokens, H, D, generator=g).to(dtype)
    value = torch.randn(tokens, H, D, generator=g).to(dtype)
    op = torch.ops.ascend_ops.reshape_and_cache
    flat_k, flat_v = key_cache.view(-1, H, D), value_cache.view(-1, H, D)
    copy_k, copy_v = torch.zeros_like(key), torch.zeros_like(value)
    sets = slot_sets(tokens, pattern, seed)
    masked = [(s >= 0, s[s >= 0]) for s in sets]
    ours, theirs = itertools.cycle(sets), itertools.cycle(masked)
    # one destination pair per slot set, side by side in one buffer: with new slots a set's
    # copy comes round again only after the others have pushed its lines out of the caches
    targets = torch.empty(len(sets), 2, *key.shape, dtype=dtype).fill_(1)  # pages mapped before timing
    copies = itertools.cycle([(t[0], t[1]) for t in targets])  # views made once, not per call

    def cpu():
        op(key, value, key_cache, value_cache, next(ours))

    def native():
        valid, index = next(theirs)
        flat_k[index] = key[valid]
        flat_v[index] = value[valid]

    def plain_copy():
        target_k, target_v = next(copies)
        target_k.copy_(key)
        target_v.copy_(value)

    def hot_copy():
        copy_k.copy_(key)
        copy_v.copy_(value)

    return {"cpu": cpu, "native": native, "plain copy": plain_copy, "hot copy": hot_copy}


def table(rounds: int = 5, shapes=DECODE + PREFILL, quick: bool = False, slots=PATTERNS) -> list:
    """Rows of HEADERS: per provider the minimum over `rounds` interleaved rounds of its p50, for
    each slot pattern of `slots` (PATTERNS; "decode" at decode T only)."""
    runner = bench.Runner(warmup=2, repeats=5 if quick else 9, min_time=0.02 if quick else 0.1, max_repeats=400)
    rows = []
    for dtype_name, dtype in DTYPES.items():
        key_cache, value_cache = caches(dtype)
        for tokens, kind in itertools.product(shapes, slots):
            if kind == "decode" and tokens > max(DECODE):
                continue
            fns = providers(tokens, dtype, key_cache, value_cache, kind)
            best = {name: float("inf") for name in fns}
            for _ in range(rounds):
                for name, fn in fns.items():
                    best[name] = min(best[name], runner.measure(fn).median)
            rows.append([tokens, dtype_name, kind, best["cpu"], best["native"], best["plain copy"],
                         best["plain copy"] / best["cpu"], best["native"] / best["cpu"],
                         best["hot copy"], best["hot copy"] / best["cpu"]])
        del key_cache, value_cache
    return rows


def heading(rounds: int) -> str:
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f"reshape_and_cache CPU copy rate, {stamp}, {machine()}, torch threads {torch.get_num_threads()}, "
            f"ASCEND_OPS_CPU_ISA={os.environ.get('ASCEND_OPS_CPU_ISA', '(unset)')}, "
            f"ASCEND_OPS_CPU_STREAM={os.environ.get('ASCEND_OPS_CPU_STREAM', '(unset)')}; H={H} D={D}, "
            f"caches {NUM_BLOCKS} x {BLOCK_SIZE} slots (256 MiB each), shuffled blocks; "
            f"min over {rounds} interleaved rounds of each provider's p50")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, nargs="*", default=list(DECODE + PREFILL))
    parser.add_argument("--threads", type=int, default=1, help="torch threads (0: torch's default; 1 by default: "
                        "with 2 on this shared 2-core machine every call waits for a descheduled worker)")
    parser.add_argument("--slots", nargs="*", default=list(PATTERNS), choices=PATTERNS)
    args = parser.parse_args(argv)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    print(heading(args.rounds))
    print(format_table(HEADERS, table(args.rounds, tuple(args.tokens), slots=tuple(args.slots))))
    print("targets: copy rate >= 0.70 at T >= 64, >= 0.60 at T = 1..16; speedup vs native not below before")
    return 0


if __name__ == "__main__":
    sys.exit(main())
