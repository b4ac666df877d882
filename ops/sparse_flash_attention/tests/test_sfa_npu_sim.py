"""The NPU host path (run_npu: common's npu::run_kernel over op.h) on common's simulated Ascend
runtime: results within the contract's tolerance of the reference, and what a steady-state call
costs the host: 0 synchronisations, 0 copies, 0 allocations (the workspace comes from the
framework allocator); a bad index raises at the next check point with the outputs unchanged."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_ops.common.loader import load_native

from sfa_cases import Shape, assert_matches, make

sim = pytest.importorskip("ascend_ops.devkit.ascend_sim")
core = load_native("ascend_ops.sparse_flash_attention", "core")
pytestmark = pytest.mark.skipif(not getattr(core, "HAS_NPU_SIM", False),
                                reason="built without AOP_WITH_NPU_SIM (./dev builds it)")
D, DR = 512, 64
INPUTS = ("query", "key", "sparse_indices", "block_table", "actual_seq_lengths_query", "actual_seq_lengths_kv",
          "query_rope", "key_rope")
CASES = [  # (id, shape, layout_query, layout_kv, dtype, sparse_mode)
    ("decode-B3-PA", Shape((1, 1, 1), (37, 200, 5), 16, D, DR, 64, block_size=16), "BSND", "PA_BSND", "float16", 3),
    ("TND-TND", Shape((3, 5), (300, 77), 8, D, DR, 64), "TND", "TND", "bfloat16", 3),
    ("TND-PA-sbs4", Shape((2, 1), (130, 64), 16, D, DR, 32, block_size=32, sbs=4), "TND", "PA_BSND", "float16", 0),
]


@pytest.fixture(scope="module")
def stream():
    s = sim.Stream()
    yield s
    s.destroy()


def prepare(shape, lq, lkv, dtype, mode):
    args = make(shape, lq, lkv, dtype, seed=len(shape.act_q) + mode)
    out, m, _ = core.run_cpu(**args, sparse_mode=mode, return_softmax_lse=True)  # the output shapes
    dev = {n: sim.to_device(args[n]) for n in INPUTS if args.get(n) is not None}
    outs = (sim.empty(out.shape, out.dtype), sim.empty(m.shape, np.float32), sim.empty(m.shape, np.float32))
    return args, dev, outs


def call(args, dev, outs, mode, stream):
    core.run_npu_sim(**{n: d.array for n, d in dev.items()}, value=dev["key"].array,
                     scale_value=args["scale_value"], attention_out=outs[0].array, softmax_max=outs[1].array,
                     softmax_sum=outs[2].array, return_softmax_lse=True, stream=stream.handle,
                     layout_query=args["layout_query"], layout_kv=args["layout_kv"],
                     sparse_block_size=args["sparse_block_size"], sparse_mode=mode)


def results(outs):
    return tuple(o.numpy() for o in outs)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_matches_reference(stream, case):
    _, shape, lq, lkv, dtype, mode = case
    args, dev, outs = prepare(shape, lq, lkv, dtype, mode)
    call(args, dev, outs, mode, stream)
    stream.synchronize()
    assert_matches(results(outs), args, dtype, mode)


def test_steady_state_call_makes_no_sync_copy_or_allocation(stream):
    _, shape, lq, lkv, dtype, mode = CASES[0]
    args, dev, outs = prepare(shape, lq, lkv, dtype, mode)
    call(args, dev, outs, mode, stream)  # first call: tiling copy, workspace grown once
    stream.synchronize()
    before = sim.counters()
    for _ in range(3):
        call(args, dev, outs, mode, stream)
    per_3 = sim.counters() - before
    assert per_3.launches == 3
    assert (per_3.synchronizations, per_3.h2d_copies, per_3.d2h_copies, per_3.d2d_copies,
            per_3.allocations, per_3.pageable_refused) == (0, 0, 0, 0, 0, 0)
    stream.synchronize()
    assert_matches(results(outs), args, dtype, mode)


def test_bad_index_raises_at_check_errors_with_the_outputs_unchanged(stream):
    from ascend_ops.common import check_errors

    _, shape, lq, lkv, dtype, mode = CASES[0]
    args, dev, outs = prepare(shape, lq, lkv, dtype, mode)
    idx = args["sparse_indices"].copy()
    idx.reshape(-1, idx.shape[-1])[1, 0] = -3  # below -1 among the entries read
    with pytest.raises(IndexError) as sync_error:  # the synchronous check's exception
        core.run_cpu(**{**args, "sparse_indices": idx}, sparse_mode=mode, return_softmax_lse=True)
    dev["sparse_indices"] = sim.to_device(idx)
    outs[0].copy_from(np.full(outs[0].shape, 2.0, args["query"].dtype))  # outputs with known bytes
    outs[1].copy_from(np.full(outs[1].shape, 0.5, np.float32))
    outs[2].copy_from(np.full(outs[2].shape, 0.25, np.float32))
    call(args, dev, outs, mode, stream)  # queued: nothing raised
    with pytest.raises(IndexError) as raised:
        check_errors()
    assert str(raised.value) == str(sync_error.value)
    got = results(outs)
    assert (got[0].astype(np.float32) == 2.0).all() and (got[1] == 0.5).all() and (got[2] == 0.25).all()
