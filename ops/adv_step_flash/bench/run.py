"""Benchmark of adv_step_flash (run by `./dev bench`).

Providers, timed in the same run on tensors of the same shape (vLLM's dtypes: int64 tokens,
positions and slots, int32 seq_lens and block tables; block_size 128; 1 in 8 rows padding):
  cpu            torch.ops.ascend_ops.advance_step_flashattn (the C++ CPU kernel)
  torch native   the same step written with PyTorch tensor ops (index_select, //, %, copies)
  empty op       torch.ops.ascend_ops._adv_step_flash_noop: an op of the same schema shape
                 (three ints, six tensors, four written) whose kernel does nothing: the cost
                 of dispatching such a call
Ratios: speedup = native p50 / cpu p50 (target >= 10 at num_seqs=256);
        empty-op ratio = cpu p50 / empty-op p50 (target <= 2).
Also the AscendC kernel through the emulator: the timing model's 910B time (910B2, 910B4) for
decode batches against the time to move only the minimum bytes (seq_lens, sampled tokens and
one table entry per advancing row read; every output row written once).
Each call advances the batch, so positions grow during a run: every provider restores its
seq_lens every RESET calls (a copy of num_seqs ints plus a Python counter per call, the same
for all three), which keeps the tables at a realistic width (a 12K-token context). Targets
are reported, not asserted.
"""
from __future__ import annotations

import argparse
import itertools
import os
import sys
from pathlib import Path

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
import torch  # noqa: E402

from ascend_ops.devkit import bench  # noqa: E402
from ascend_ops.common.table import format_table  # noqa: E402
from ascend_ops.adv_step_flash import advance_step_flashattn, torch_ops  # noqa: E402,F401  (registers the op)

OP = "adv_step_flash"
BLOCK_SIZE = 128
RESET = 4096  # calls between seq_lens restores: the position headroom of the tables
NUM_SEQS = (1, 4, 16, 64, 256, 1024)


def make_case(num_seqs: int, seed: int = 0):
    """(num_seqs, num_queries, block_size, six tensors) of a decode batch."""
    g = torch.Generator().manual_seed(seed)
    num_queries = max(1, num_seqs - num_seqs // 8)
    width = (4096 + RESET + 1) // BLOCK_SIZE + 1
    tables = torch.randint(0, 1 << 16, (num_seqs, width), generator=g, dtype=torch.int32)
    return (
        num_seqs, num_queries, BLOCK_SIZE,
        torch.zeros(num_seqs, dtype=torch.int64),                                   # input_tokens
        torch.randint(0, 152064, (num_queries, 1), generator=g, dtype=torch.int64),  # sampled_token_ids
        torch.zeros(num_seqs, dtype=torch.int64),                                   # input_positions
        torch.randint(0, 4096, (num_seqs,), generator=g, dtype=torch.int32),        # seq_lens
        torch.zeros(num_seqs, dtype=torch.int64),                                   # slot_mapping
        tables,                                                                     # block_tables
    )


def native_step(num_seqs, num_queries, block_size, input_tokens, sampled, input_positions, seq_lens, slot_mapping,
                block_tables):
    """The step with PyTorch tensor ops: what a runner does without the custom op."""
    q = num_queries
    pos = seq_lens[:q]
    input_tokens[:q] = sampled.view(-1)
    input_positions[:q] = pos
    index = torch.div(pos, block_size, rounding_mode="floor").long()
    blocks = block_tables[:q].gather(1, index.unsqueeze(1)).squeeze(1)
    slot_mapping[:q] = blocks.long() * block_size + pos % block_size
    seq_lens[:q] += 1
    input_tokens[q:] = 0
    input_positions[q:] = 0
    slot_mapping[q:] = -1


def _resetting(fn, args):
    """fn(*args), with args' seq_lens restored every RESET calls."""
    seq_lens, start = args[6], args[6].clone()
    calls = itertools.count()

    def call():
        if next(calls) % RESET == 0:
            seq_lens.copy_(start)
        fn(*args)

    return call


def providers(num_seqs: int):
    op = torch.ops.ascend_ops.advance_step_flashattn.default
    noop = torch.ops.ascend_ops._adv_step_flash_noop.default
    return {
        "cpu": _resetting(op, make_case(num_seqs)),
        "torch native": _resetting(native_step, make_case(num_seqs)),
        "empty op": _resetting(noop, make_case(num_seqs)),
    }


def emulator_model(num_seqs: int, soc: str) -> list:
    """The timing model's time of one step on the emulated 910B, against the minimum traffic."""
    args = [a.numpy() if isinstance(a, torch.Tensor) else a for a in make_case(num_seqs)]
    report = advance_step_flashattn(*args, backend="emu", soc=soc, order="in_order")
    s, q = num_seqs, args[1]
    minimum = q * (4 + 8 + 4) + s * (8 + 8 + 8) + q * 4  # reads; tokens, positions, slots; seq_lens
    return bench.modelled_row(f"num_seqs={num_seqs}", soc, report, minimum)


def mindspore_calls() -> dict:
    """The PyNative call on tiny tensors (one sequence), for the call cost. Each call advances
    the sequence by one: the 128-entry block table leaves room for 16K calls."""
    import numpy as np
    import mindspore as ms  # before the adapter
    from ascend_ops.adv_step_flash import ms as asf_ms

    one = lambda value, dtype: ms.Tensor(np.array([value], dtype))  # noqa: E731
    tokens, positions, slots = one(0, np.int64), one(0, np.int64), one(0, np.int64)
    seq_lens, sampled = one(1, np.int32), ms.Tensor(np.array([[5]], np.int64))
    tables = ms.Tensor(np.arange(128, dtype=np.int32).reshape(1, 128))
    return {"advance_step_flashattn num_seqs=1": lambda: asf_ms.advance_step_flashattn(
        1, 1, BLOCK_SIZE, tokens, sampled, positions, seq_lens, slots, tables)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer shapes and samples (smoke run)")
    parser.add_argument("--out", type=Path, default=Path("bench-results"), help="CSV, JSON and PNG go here")
    args = parser.parse_args(argv)

    sizes = (1, 256, 1024) if args.quick else NUM_SEQS
    runner = bench.Runner(warmup=2, repeats=5 if args.quick else 15, min_time=0.05 if args.quick else 0.3)
    cases = []
    for num_seqs in sizes:
        for provider, fn in providers(num_seqs).items():
            cases.append(bench.Case(OP, provider, f"num_seqs={num_seqs}", "int64/int32", fn))
    results = runner.run(cases, baseline="torch native")
    bench.print_table(results)

    by_key = {(r.shape, r.provider): r for r in results}
    rows = []
    for num_seqs in sizes:
        shape = f"num_seqs={num_seqs}"
        cpu, native, empty = (by_key[(shape, p)].p50_us for p in ("cpu", "torch native", "empty op"))
        rows.append([shape, cpu, native, empty, native / cpu, cpu / empty])
    print()
    print(format_table(["shape", "cpu p50 µs", "native p50 µs", "empty op p50 µs", "speedup vs native",
                        "cpu / empty op"], rows))
    print("targets: speedup vs native >= 10 at num_seqs=256; cpu / empty op <= 2")

    print()
    model = [emulator_model(n, soc) for n in ((256,) if args.quick else (1, 256, 4096))
             for soc in ("Ascend910B2", "Ascend910B4")]
    print(format_table(bench.MODELLED_HEADERS, model))
    print("modelled µs: the emulator's timing model of a 910B (modelled, not run on NPU)")

    import npu_sim  # bench/npu_sim.py: the npu path on the simulated Ascend runtime

    return bench.finish(OP, results, args.out, mindspore_calls=mindspore_calls, npu_sim_rows=npu_sim.rows,
                        quick=args.quick)


if __name__ == "__main__":
    sys.exit(main())
