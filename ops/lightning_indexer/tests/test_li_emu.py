"""The AscendC kernel through the emulator (910B2 preset) against the float64 reference, with
li_cases' comparison rule (the README's tolerance holds for emu too: see "Tolerance"), and
checks of the launch report (cube work and key traffic: every visible key tile is fetched and
multiplied once per query-row group).

The kernel is a MIX 1:2 launch (one AIC and two AIVs per group, cross-core hand-offs through a
ping-pong GM workspace); the emulator's race detector, hang and event-id checks run on every case.
Decode (S1 = 1..4) and prefill (S1 = 128) with S2 up to 16k; both sparse modes; every layout
pair; N1 in {1, 8, 64}; K in {1, 2048, 8192}; act_s1 > act_s2; sparse_count above and below the
visible length; float16 and bfloat16 (query-dtype / float32 weights); the Ascend910B2 and
Ascend910B4 presets. Small cases run both block orders.
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_ops.common.loader import load_native
from ascend_ops.lightning_indexer import lightning_indexer

from li_cases import Shape, assert_topk, compress, make, reference_rows

core = load_native("ascend_ops.lightning_indexer", "core")
if not core.HAS_EMU:
    pytest.skip("the emulator build is off (AOP_WITH_EMU): no emu backend to test", allow_module_level=True)

D = 128


# (shape, layout_query, layout_key, dtype, sparse_mode, weights_fp32, order, soc)
# A representative matrix, not the full product (the emulator is slow): every layout pair, both
# sparse modes, N1 in {1, 8, 64}, K in {1, 2048, 8192}, decode S1 = 1..4 and prefill S1 = 128,
# S2 up to 16k, float16 / bfloat16 with query-dtype and float32 weights, both platform presets;
# the big shapes (S2 = 16k, K = 8192, N1 = 64) in a few cases.
B2, B4 = "Ascend910B2", "Ascend910B4"
CASES = [
    # decode, S2 up to 16k, K above (1000 visible) and below (16384) the visible length
    (Shape((1, 1), (1000, 16384), 8, D, 2048, block_size=128, name="decode-S1=1-S2=1000,16k"),
     "BSND", "PA_BSND", "bfloat16", 3, False, "both", B2),
    (Shape((4, 3), (4096, 700), 16, D, 512, block_size=64, name="decode-S1=4,3-S2=4096,700"),
     "BSND", "PA_BSND", "float16", 0, True, "in_order", B4),
    (Shape((2,), (16384,), 64, D, 2048, block_size=128, name="decode-S1=2-N1=64-S2=16k"),
     "BSND", "PA_BSND", "float16", 3, False, "in_order", B2),
    # N1 = 1 and one query row: m = 1 would be GEMV (L0A read as ND); the kernel pads m to 16
    (Shape((1, 1), (300, 77), 1, D, 64, block_size=16, name="decode-N1=1-m=1"),
     "BSND", "PA_BSND", "float16", 3, False, "in_order", B4),
    # K = 1 with N1 = 1 (one AIV of each group has no row: it still takes every hand-off)
    (Shape((1, 2, 1), (500, 33, 0), 1, D, 1, extra_q=0, name="decode-N1=1-K=1-TND-BSND"),
     "TND", "BSND", "bfloat16", 3, True, "both", B2),
    # K = 8192 with N1 = 64: three MrgSort lists of the running top-k, Extract in two calls
    (Shape((1, 1), (9000, 5000), 64, D, 8192, block_size=128, name="decode-N1=64-K=8192"),
     "BSND", "PA_BSND", "bfloat16", 0, False, "in_order", B4),
    # prefill S1 = 128
    (Shape((128,), (1000,), 8, D, 256, block_size=128, name="prefill-S1=128-S2=1000"),
     "BSND", "PA_BSND", "bfloat16", 3, False, "in_order", B2),
    (Shape((128,), (4096,), 4, D, 2048, block_size=256, extra_q=0, name="prefill-S1=128-S2=4096"),
     "TND", "PA_BSND", "bfloat16", 0, True, "both", B4),
    (Shape((128,), (8192,), 4, D, 1024, block_size=512, name="prefill-S1=128-S2=8192-BSND"),
     "BSND", "BSND", "float16", 3, False, "in_order", B2),
    # small cases, both block orders
    (Shape((3, 1, 2), (40, 77, 5), 8, D, 32, block_size=16, name="small-PA-odd"),
     "BSND", "PA_BSND", "float16", 3, False, "both", B2),
    (Shape((20, 5), (12, 40), 8, D, 16, name="act_s1>act_s2-BSND"),
     "BSND", "BSND", "float16", 3, False, "both", B4),
    (Shape((3, 5), (300, 77), 8, D, 64, extra_q=2, name="TND-TND"),
     "TND", "TND", "bfloat16", 3, False, "both", B2),
    (Shape((2, 4), (600, 33), 8, D, 40, extra_q=1, name="BSND-TND"),
     "BSND", "TND", "float16", 0, True, "both", B4),
    (Shape((2, 4), (50, 33), 12, D, 40, block_size=48, name="mode0-K-above"),
     "BSND", "PA_BSND", "bfloat16", 0, True, "both", B2),
]


def run_emu(args, dtype, mode, return_value=True, order="both", soc="Ascend910B2"):
    return core.run_emu(**args, sparse_mode=mode, return_value=return_value, order=order, soc=soc,
                        dtype="bfloat16" if dtype == "bfloat16" else "")


@pytest.mark.parametrize("case", CASES, ids=lambda c: str(c[0]))
def test_matches_reference(case):
    shape, lq, lk, dtype, mode, w32, order, soc = case
    args = make(shape, lq, lk, dtype, seed=len(shape.s1) + mode, weights_fp32=w32,
                length_dtype=np.int64 if mode else np.int32)
    idx, val, report = run_emu(args, dtype, mode, order=order, soc=soc)
    assert idx.dtype == np.int32 and val.dtype == np.float32
    assert_topk(idx, val, reference_rows(args, dtype, mode), shape.k)
    assert report["kernel_name"] == "lightning_indexer_kernel"
    assert len(report["orders"]) == (2 if order == "both" else 1)
    assert 0 < report["max_ub_high_water"] <= report["ub_bytes"] == 196608
    # a MIX 1:2 launch: block_dim groups of one AIC and two AIVs, block_dim <= the AIC count
    tiling = core.kernel_tiling(**args, sparse_mode=mode, return_value=True, soc=soc,
                                dtype="bfloat16" if dtype == "bfloat16" else "")
    aics = 24 if soc == B2 else 20
    assert report["block_dim"] == tiling["block_dim"] == min(tiling["units"], aics)
    assert tiling["units"] == tiling["items"] * tiling["splits"]


# DeepSeek-V4's compressed keys (cmp_ratio, cmp_residual_k; the rule in
# kernel/lightning_indexer_visibility.h): (shape, layout_query, layout_key, dtype, sparse_mode,
# ratio, residuals or None for random, soc). V4 decode as the engines call it (TND query, one or
# two tokens per request, PA_BSND keys, top-k 512), prefills from scratch (act_s2 * r + residual =
# act_s1: the first rows see no compressed row), r = 2 / 4 / 128, both presets.
CMP_CASES = [
    (Shape((1,) * 6, (2048, 700, 3, 0, 1, 4096), 64, D, 512, block_size=128, extra_q=0, name="v4-decode-r=4"),
     "TND", "PA_BSND", "bfloat16", 3, 4, None, B2),
    (Shape((2, 2, 1), (1500, 9, 300), 64, D, 512, block_size=128, extra_q=0, name="v4-mtp-r=4"),
     "TND", "PA_BSND", "bfloat16", 3, 4, None, B4),
    (Shape((128, 37), (32, 9), 8, D, 64, block_size=16, name="prefill-from-scratch-r=4"),
     "BSND", "PA_BSND", "float16", 3, 4, (0, 1), B2),
    (Shape((128, 37), (32, 9), 8, D, 64, block_size=16, name="prefill-from-scratch-r=4-910B4"),
     "BSND", "PA_BSND", "bfloat16", 3, 4, (3, 1), B4),
    (Shape((300, 130), (2, 1), 4, D, 8, extra_q=1, name="prefill-from-scratch-r=128-TND"),
     "TND", "TND", "bfloat16", 3, 128, (44, 2), B2),
    (Shape((3, 1), (500, 77), 8, D, 100, name="r=2-BSND"),
     "BSND", "BSND", "float16", 3, 2, None, B4),
    (Shape((3, 1), (500, 77), 8, D, 100, block_size=32, name="r=4-mode0"),
     "BSND", "PA_BSND", "float16", 0, 4, None, B2),
]


@pytest.mark.parametrize("case", CMP_CASES, ids=lambda c: str(c[0]))
def test_compressed_keys_match_reference(case):
    shape, lq, lk, dtype, mode, ratio, residual, soc = case
    args = compress(make(shape, lq, lk, dtype, seed=ratio), ratio, residual, seed=ratio)
    idx, val, _ = run_emu(args, dtype, mode, order="in_order", soc=soc)
    assert_topk(idx, val, reference_rows(args, dtype, mode), shape.k)


def test_ties_go_to_the_smaller_index_exactly():
    """Keys drawn from a pool of 4 vectors tie exactly; Sort / MrgSort keep input order on
    equal scores, so the indices equal the reference's (ties to the smaller index)."""
    shape = Shape((3, 2), (300, 90), 8, D, 120, block_size=32)
    for mode in (0, 3):
        args = make(shape, "BSND", "PA_BSND", "bfloat16", key_pool=4)
        idx, val, _ = run_emu(args, "bfloat16", mode)
        assert_topk(idx, val, reference_rows(args, "bfloat16", mode), shape.k, exact=True)


def _case(name):
    return next(c for c in CASES if str(c[0]) == name)


def test_the_api_runs_the_emulator():
    """backend="emu" through the public function; cpu and emu both pass the rule (their float32
    sums differ in order, so near-ties may rank differently)."""
    shape = _case("small-PA-odd")[0]
    args = make(shape, "BSND", "PA_BSND", "float16", seed=3)
    rows = reference_rows(args, "float16", 3)
    emu = lightning_indexer(**args, sparse_mode=3, return_value=True, backend="emu")
    cpu = lightning_indexer(**args, sparse_mode=3, return_value=True, backend="cpu")
    assert_topk(*emu, rows, shape.k)
    assert_topk(*cpu, rows, shape.k)
    idx, val = lightning_indexer(**args, sparse_mode=3, backend="emu")
    assert val is None
    np.testing.assert_array_equal(idx, emu[0])


def _limit(mode, act_s1, act_s2, r):
    return act_s2 if mode == 0 else min(max(act_s2 - act_s1 + r + 1, 0), act_s2)


@pytest.mark.parametrize("mode", [0, 3])
def test_report_keys_fetched_once_per_row_group(mode):
    """cube MACs and the key-tile DMAs are exactly one pass over the visible key tiles per
    (batch, query-row group): keys are never re-fetched within a group."""
    shape = Shape((40, 3), (700, 2000), 8, D, 64, block_size=128, extra_q=0)
    args = make(shape, "BSND", "PA_BSND", "float16", seed=5)
    tiling = core.kernel_tiling(**args, sparse_mode=mode, return_value=True)
    _, _, report = run_emu(args, "float16", mode, order="in_order")
    rows, tile = tiling["rows_per_group"], tiling["tile_keys"]
    assert tile == 128 and (rows * shape.n1) * D * 2 != tile * D * 2
    macs, key_tiles = 0, {}
    for act_s1, act_s2 in zip(shape.s1, shape.s2):
        for r0 in range(0, act_s1, rows):
            real = min(rows, act_s1 - r0)
            extent = _limit(mode, act_s1, act_s2, r0 + real - 1)
            for j0 in range(0, extent, tile):
                n = min(tile, extent - j0)
                macs += real * shape.n1 * n * D
                size = (n + 15) // 16 * 16 * D * 2
                key_tiles[size] = key_tiles.get(size, 0) + 1
    totals = report["totals"]
    assert totals["cube_macs"] == macs
    full = tile * D * 2
    assert totals["gm_to_local"]["sizes"].get(full, 0) == key_tiles[full]
    assert report["block_dim"] == tiling["block_dim"] == min(tiling["units"], 24)  # AICs of 910B2
    assert report["max_ub_high_water"] == tiling["ub_bytes"]


def test_tiling_follows_the_platform_and_sparse_count():
    small = make(Shape((1,), (100,), 64, D, 8192, block_size=128), "BSND", "PA_BSND", "float16")
    t = core.kernel_tiling(**small, sparse_mode=3)
    # each AIV keeps the running lists of its half of the group's rows: one 8192-pair list each
    assert t["k_pad"] == 8192 and t["rows_per_group"] == 2 and t["rows_per_aiv"] == 1
    assert t["ub_bytes"] <= 196608 and t["block_dim"] == 1
    t2 = core.kernel_tiling(**dict(small, sparse_count=100), sparse_mode=3)
    assert t2["k_pad"] == 128
    prefill = make(Shape((128,), (300,), 64, D, 2048, block_size=128, extra_q=0), "BSND", "PA_BSND", "float16")
    t3 = core.kernel_tiling(**prefill, sparse_mode=3)
    assert t3["m_pad"] * D * 2 <= 65536 and t3["rows_per_group"] == 4  # L0A: 256 rows of q
    assert t3["groups_per_batch"] == 32
    # decode: fewer items than AICs, so each item's keys are split over the AICs (>= 512 keys each)
    decode = make(Shape((1,), (16384,), 64, D, 2048, block_size=128), "BSND", "PA_BSND", "float16")
    td = core.kernel_tiling(**decode, sparse_mode=3)
    assert td["items"] == 1 and td["splits"] == td["block_dim"] >= 8
    td4 = core.kernel_tiling(**decode, sparse_mode=3, soc="Ascend910B4")
    assert td4["splits"] == td4["block_dim"] >= 8
    # 32 items on 24 AICs: 3 splits each share them evenly (4 units per AIC, not 1 or 2 items)
    b32 = make(Shape((1,) * 32, (8192,) * 32, 8, D, 2048, block_size=128), "BSND", "PA_BSND", "float16")
    t32 = core.kernel_tiling(**b32, sparse_mode=3)
    assert t32["items"] == 32 and t32["splits"] == 3 and t32["units"] == 96 and t32["block_dim"] == 24
    assert t3["splits"] == 1 and t3["block_dim"] == 24  # prefill: 32 items
    odd = make(Shape((1,), (100,), 8, D, 16, block_size=48), "BSND", "PA_BSND", "float16")
    assert core.kernel_tiling(**odd, sparse_mode=3)["tile_keys"] == 48  # divides block_size


# TND query as engines call it (vllm-ascend: layout_query "TND", layout_key "PA_BSND"): the work
# items are the row groups of the flat rows in order, each batch's found from the query ends
# (Work::FirstItem). Decode (at most two rows per batch on average) takes one row per group;
# prefill larger groups, with partial last groups, empty batches and padding rows past the last
# end; both block orders.
TND_CASES = [
    (Shape((1, 0, 3, 1, 1), (700, 90, 1500, 0, 33), 8, D, 64, block_size=64, extra_q=2, name="tnd-decode-mixed-rows"),
     "PA_BSND", 3, "both", B2),
    (Shape((1, 1, 1, 1), (4096, 300, 2500, 1), 8, D, 256, block_size=128, extra_q=0, name="tnd-decode-B4"),
     "PA_BSND", 0, "both", B4),
    (Shape((2, 2, 1), (900, 40, 3000), 4, D, 100, extra_q=1, name="tnd-mtp-TND-keys"),
     "TND", 3, "in_order", B2),
    (Shape((7, 0, 13, 5, 33), (300, 50, 13, 600, 40), 8, D, 32, block_size=32, extra_q=3, name="tnd-prefill-partial"),
     "PA_BSND", 3, "both", B2),
    (Shape((9, 4, 1), (200, 120, 77), 16, D, 48, extra_q=0, name="tnd-prefill-BSND-keys"),
     "BSND", 0, "both", B4),
]


@pytest.mark.parametrize("case", TND_CASES, ids=lambda c: str(c[0]))
def test_tnd_query_matches_reference(case):
    shape, lk, mode, order, soc = case
    args = make(shape, "TND", lk, "bfloat16", seed=11 + mode)
    tiling = core.kernel_tiling(**args, sparse_mode=mode, return_value=True, soc=soc, dtype="bfloat16")
    t1, b, rows = args["query"].shape[0], len(shape.s1), tiling["rows_per_group"]
    assert (rows == 1) == (t1 <= 2 * b)
    assert tiling["items"] == (t1 if rows == 1 else -(-t1 // rows) + b)
    idx, val, _ = run_emu(args, "bfloat16", mode, order=order, soc=soc)
    assert_topk(idx, val, reference_rows(args, "bfloat16", mode), shape.k)
    real = sum(shape.s1)  # rows past the last end are -1 / -inf
    assert (idx[real:] == -1).all() and np.isneginf(val[real:]).all()


def test_tnd_prefill_shares_rows_evenly():
    """TND prefill of several batches: every AIC multiplies about the same number of query rows
    by the same keys (items follow the flat rows), as the BSND query of the same rows does."""
    shape = Shape((32,) * 4, (512,) * 4, 16, D, 64, block_size=128, extra_q=0)
    macs = {}
    for lq in ("TND", "BSND"):
        args = make(shape, lq, "PA_BSND", "float16", seed=2)
        _, _, report = run_emu(args, "float16", 0, order="in_order")
        per_aic = [blk["counters"]["cube_macs"] for blk in report["blocks"] if blk["core"] == "AIC"]
        macs[lq] = max(per_aic)
        assert max(per_aic) <= 1.5 * sum(per_aic) / len(per_aic), lq
    assert macs["TND"] <= 1.25 * macs["BSND"]


@pytest.mark.parametrize("change, error, text", [
    (dict(dtype="float32"), TypeError, "float16 or bfloat16 for the AscendC kernel"),
    (dict(d=64), ValueError, "D = 128"),
    (dict(n1=72), ValueError, "N1 <= 64"),
    (dict(block_size=24), ValueError, "multiple of 16"),
    (dict(n2=2), ValueError, "N2 = 1"),
])
def test_limits_of_the_kernel_are_clear_errors(change, error, text):
    dtype = change.get("dtype", "float16")
    n1 = change.get("n1", 8)
    shape = Shape((2,), (40,), n1, change.get("d", D), 8, n2=change.get("n2", 1),
                  block_size=change.get("block_size", 16))
    args = make(shape, "BSND", "PA_BSND", dtype)
    with pytest.raises(error, match=text):
        lightning_indexer(**args, backend="emu")


def test_bad_order_and_block_ids_are_caught_before_launch():
    args = make(_case("small-PA-odd")[0], "BSND", "PA_BSND", "float16")
    with pytest.raises(ValueError, match="order should be"):
        core.run_emu(**args, order="sideways")
    args["block_table"][0, 0] = 999
    with pytest.raises(IndexError, match="block_table"):
        core.run_emu(**args)
