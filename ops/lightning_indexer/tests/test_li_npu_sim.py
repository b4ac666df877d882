"""The NPU host path (run_npu: common's npu::run_kernel over op.h) on common's simulated Ascend runtime: results within
the documented tolerance of the reference, and what a steady-state call costs the host: 0
synchronisations, 0 copies, 0 allocations (the workspace comes from the framework allocator)."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_ops.common.loader import load_native

from li_cases import Shape, assert_topk, make, reference_rows

sim = pytest.importorskip("ascend_ops.devkit.ascend_sim")
core = load_native("ascend_ops.lightning_indexer", "core")
pytestmark = pytest.mark.skipif(not getattr(core, "HAS_NPU_SIM", False),
                                reason="built without AOP_WITH_NPU_SIM (./dev builds it)")
D = 128
INPUTS = ("query", "key", "weights", "actual_seq_lengths_query", "actual_seq_lengths_key", "block_table")
CASES = [  # (shape, layout_query, layout_key, dtype, sparse_mode)
    (Shape((1, 1, 1), (37, 200, 5), 8, D, 64, name="decode-B3-K64"), "BSND", "PA_BSND", "float16", 3),
    (Shape((3, 5), (300, 77), 8, D, 64, extra_q=2, name="TND-TND"), "TND", "TND", "bfloat16", 3),
    (Shape((2, 4), (600, 33), 8, D, 40, extra_q=1, name="BSND-TND"), "BSND", "TND", "float16", 0),
]


@pytest.fixture(scope="module")
def stream():
    s = sim.Stream()
    yield s
    s.destroy()


def prepare(shape, lq, lk, dtype, mode):
    args = make(shape, lq, lk, dtype, seed=len(shape.s1) + mode, length_dtype=np.int64 if mode else np.int32)
    kind = "bfloat16" if dtype == "bfloat16" else ""
    idx, _ = core.run_cpu(**args, sparse_mode=mode, return_value=True, dtype=kind)  # the output shape
    dev = {n: sim.to_device(args[n]) for n in INPUTS if args.get(n) is not None}
    out = (sim.empty(idx.shape, np.int32), sim.empty(idx.shape, np.float32))
    return args, dev, out, kind


def call(args, dev, out, kind, mode, stream):
    core.run_npu_sim(**{n: d.array for n, d in dev.items()}, sparse_indices=out[0].array,
                     sparse_values=out[1].array, stream=stream.handle, layout_query=args["layout_query"],
                     layout_key=args["layout_key"], sparse_count=args["sparse_count"], sparse_mode=mode, dtype=kind)


@pytest.mark.parametrize("case", CASES, ids=lambda c: str(c[0]))
def test_matches_reference(stream, case):
    shape, lq, lk, dtype, mode = case
    args, dev, out, kind = prepare(*case)
    call(args, dev, out, kind, mode, stream)
    stream.synchronize()
    assert_topk(out[0].numpy(), out[1].numpy(), reference_rows(args, dtype, mode), shape.k)


def test_steady_state_call_makes_no_sync_copy_or_allocation(stream):
    shape, lq, lk, dtype, mode = CASES[0]
    args, dev, out, kind = prepare(*CASES[0])
    call(args, dev, out, kind, mode, stream)  # first call: tiling copy, workspace grown once
    stream.synchronize()
    before = sim.counters()
    for _ in range(3):
        call(args, dev, out, kind, mode, stream)
    per_3 = sim.counters() - before
    assert per_3.launches == 3
    assert (per_3.synchronizations, per_3.h2d_copies, per_3.d2h_copies, per_3.d2d_copies,
            per_3.allocations, per_3.pageable_refused) == (0, 0, 0, 0, 0, 0)
    stream.synchronize()
    assert_topk(out[0].numpy(), out[1].numpy(), reference_rows(args, dtype, mode), shape.k)


def test_bad_block_id_raises_at_check_errors_with_the_outputs_unchanged(stream):
    from ascend_ops.common import check_errors

    shape, lq, lk, dtype, mode = CASES[0]
    args, dev, out, kind = prepare(*CASES[0])
    table = args["block_table"].copy()
    table[1, 0] = 10**6  # a block id beyond the key's blocks
    with pytest.raises(IndexError) as sync_error:  # the synchronous check's exception
        core.run_cpu(**{**args, "block_table": table}, sparse_mode=mode, return_value=True, dtype=kind)
    dev["block_table"] = sim.to_device(table)
    out[0].copy_from(np.full(out[0].shape, 7, np.int32))  # outputs with known bytes
    out[1].copy_from(np.full(out[1].shape, 0.5, np.float32))
    call(args, dev, out, kind, mode, stream)  # queued: nothing raised
    with pytest.raises(IndexError) as raised:
        check_errors()
    assert str(raised.value) == str(sync_error.value)
    assert (out[0].numpy() == 7).all() and (out[1].numpy() == 0.5).all()
