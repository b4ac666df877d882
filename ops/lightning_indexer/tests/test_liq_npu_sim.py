"""The NPU host path (run_npu: common's npu::run_kernel over op_quant.h) on common's simulated Ascend
runtime: the NPU-numerics reference exactly, no host synchronisation, copy or allocation in steady
state, and a bad block id raised at check_errors() with the outputs unchanged (the kernel's check
phase)."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_ops.common.loader import load_native

from liq_cases import Shape, make
from test_liq_emu import assert_npu_exact

sim = pytest.importorskip("ascend_ops.devkit.ascend_sim")
core = load_native("ascend_ops.lightning_indexer_quant", "core")
pytestmark = pytest.mark.skipif(not getattr(core, "HAS_NPU_SIM", False),
                                reason="built without AOP_WITH_NPU_SIM (./dev builds it)")
D = 128
INPUTS = ("query", "key", "weights", "query_dequant_scale", "key_dequant_scale", "actual_seq_lengths_query",
          "actual_seq_lengths_key", "block_table")
SHAPE = Shape((1, 1, 1), (37, 200, 5), 8, D, 64, name="decode-B3-K64")


@pytest.fixture(scope="module")
def stream():
    s = sim.Stream()
    yield s
    s.destroy()


def prepare():
    args = make(SHAPE, "BSND", "PA_BSND", weights_dtype="float16", scale_dtype="float16", seed=3)
    idx, _ = core.run_cpu(**args, sparse_mode=3, return_value=True)  # the output shape
    dev = {n: sim.to_device(args[n]) for n in INPUTS if args.get(n) is not None}
    out = (sim.empty(idx.shape, np.int32), sim.empty(idx.shape, np.float32))
    return args, dev, out


def call(args, dev, out, stream):
    core.run_npu_sim(**{n: d.array for n, d in dev.items()}, sparse_indices=out[0].array,
                     sparse_values=out[1].array, stream=stream.handle, layout_query=args["layout_query"],
                     layout_key=args["layout_key"], sparse_count=args["sparse_count"], sparse_mode=3)


def test_steady_state_call_matches_and_makes_no_sync_copy_or_allocation(stream):
    args, dev, out = prepare()
    call(args, dev, out, stream)  # first call: tiling copy, workspace grown once
    stream.synchronize()
    assert_npu_exact(out[0].numpy(), out[1].numpy(), args, 3, SHAPE.k)
    before = sim.counters()
    for _ in range(3):
        call(args, dev, out, stream)
    per_3 = sim.counters() - before
    assert per_3.launches == 3
    assert (per_3.synchronizations, per_3.h2d_copies, per_3.d2h_copies, per_3.d2d_copies,
            per_3.allocations, per_3.pageable_refused) == (0, 0, 0, 0, 0, 0)
    stream.synchronize()
    assert_npu_exact(out[0].numpy(), out[1].numpy(), args, 3, SHAPE.k)


def test_bad_block_id_raises_at_check_errors_with_the_outputs_unchanged(stream):
    from ascend_ops.common import check_errors

    args, dev, out = prepare()
    table = args["block_table"].copy()
    table[1, 0] = 10**6  # a block id beyond the key's blocks
    with pytest.raises(IndexError) as sync_error:  # the synchronous check's exception
        core.run_cpu(**{**args, "block_table": table}, sparse_mode=3, return_value=True)
    dev["block_table"] = sim.to_device(table)
    out[0].copy_from(np.full(out[0].shape, 7, np.int32))  # outputs with known bytes
    out[1].copy_from(np.full(out[1].shape, 0.5, np.float32))
    call(args, dev, out, stream)  # queued: nothing raised
    with pytest.raises(IndexError) as raised:
        check_errors()
    assert str(raised.value) == str(sync_error.value)
    assert (out[0].numpy() == 7).all() and (out[1].numpy() == 0.5).all()


def _poke_query(args, name, value):
    a = args[name].copy()
    a[1, 0, 3] = value
    return a


@pytest.mark.parametrize("case", ["qs-negative", "ks-nan", "w-times-qs"])
def test_bad_scales_raise_at_check_errors_with_the_outputs_unchanged(stream, case):
    """The kernel's own checks of the scales (nothing is read on the host on this path): the
    synchronous check's exception at check_errors(), every output byte as it was."""
    from ascend_ops.common import check_errors

    args, dev, out = prepare()
    bad = dict(args)
    if case == "qs-negative":
        bad["query_dequant_scale"] = _poke_query(args, "query_dequant_scale", -0.5)
    elif case == "ks-nan":  # logical key 150 of batch 1 (visible), through the block table
        ks = args["key_dequant_scale"].copy()
        bs = args["key"].shape[1]
        ks[int(args["block_table"][1, 150 // bs]), 150 % bs] = np.nan
        bad["key_dequant_scale"] = ks
    else:
        bad["weights"] = _poke_query(args, "weights", 40000.0)
        bad["query_dequant_scale"] = _poke_query(args, "query_dequant_scale", 2.0)
    with pytest.raises(ValueError) as sync_error:  # the emu backend's host check (check_data_kernel)
        core.run_emu(**bad, sparse_mode=3, return_value=True)
    for name in ("weights", "query_dequant_scale", "key_dequant_scale"):
        dev[name] = sim.to_device(bad[name])
    out[0].copy_from(np.full(out[0].shape, 7, np.int32))
    out[1].copy_from(np.full(out[1].shape, 0.5, np.float32))
    call(args, dev, out, stream)  # queued: nothing raised
    with pytest.raises(ValueError) as raised:
        check_errors()
    assert str(raised.value) == str(sync_error.value)
    assert (out[0].numpy() == 7).all() and (out[1].numpy() == 0.5).all()
    for name in ("weights", "query_dequant_scale", "key_dequant_scale"):  # good inputs again: exact
        dev[name] = sim.to_device(args[name])
    call(args, dev, out, stream)
    stream.synchronize()
    check_errors()
    assert_npu_exact(out[0].numpy(), out[1].numpy(), args, 3, SHAPE.k)
