"""The AscendC kernel through the emulator against the float64 reference, within the contract's
tolerance (sfa_cases.assert_matches), on the Ascend910B2 and Ascend910B4 presets, and checks of
the launch report (the work split, the UB budget, the gather: each selected latent row read once
when value is key).

The kernel is a MIX 1:2 launch (one AIC and two AIVs per group, cross-core hand-offs through GM
slots); the emulator's race detector, hang, data-cache and event-id checks run on every case.
The matrix: BSND / TND query; PA_BSND / BSND / TND kv; sparse_block_size 1 and > 1; sparse_mode
0 and 3; -1 tails, entries outside the causal window, empty rows, rows outside every batch
(act_q < S1, TND rows past the last end); decode rows split over the AICs; value is key and value a separate equal copy;
return_softmax_lse on and off; N1 in {1, 16, 128}; K small and 2048; bfloat16 and float16.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from ascend_ops.common.loader import load_native
from ascend_ops.sparse_flash_attention import reference, sparse_flash_attention

from sfa_cases import Shape, assert_matches, make, reference_args

core = load_native("ascend_ops.sparse_flash_attention", "core")
if not core.HAS_EMU:
    pytest.skip("the emulator build is off (AOP_WITH_EMU): no emu backend to test", allow_module_level=True)

D, DR = 512, 64
B2, B4 = "Ascend910B2", "Ascend910B4"
AICS = {B2: 24, B4: 20}


def npu_shape(act_q, act_kv, n1, k, block_size=64, sbs=1, s1_pad=0, s2_pad=3):
    return Shape(tuple(act_q), tuple(act_kv), n1, D, DR, k, block_size=block_size, sbs=sbs, s1_pad=s1_pad,
                 s2_pad=s2_pad)


# (id, shape, layout_query, layout_kv, dtype, sparse_mode, lse, value_is_key, order, soc)
# A representative matrix, not the full product (the emulator is slow: a decode row of N1 = 128
# and K = 2048 is 0.3 G multiply-adds emulated one by one).
CASES = [
    ("decode-N1=128-K=2048", npu_shape((1,), (5000,), 128, 2048, block_size=128),
     "BSND", "PA_BSND", "bfloat16", 3, True, True, "in_order", B2),
    ("decode-N1=16-K=2048-TND-B=3", npu_shape((1, 1, 1), (3000, 700, 2100), 16, 2048, block_size=128),
     "TND", "PA_BSND", "float16", 3, True, True, "in_order", B4),
    ("N1=1-BSND-BSND-mode0", npu_shape((2, 1), (90, 40), 1, 64), "BSND", "BSND", "bfloat16", 0, True, True,
     "both", B2),
    ("sbs=4-rows-outside-batches", npu_shape((3, 2), (300, 130), 16, 100, block_size=64, sbs=4, s1_pad=2),
     "BSND", "PA_BSND", "float16", 3, True, True, "both", B4),
    ("TND-TND-value-copy", npu_shape((3, 2), (400, 77), 16, 300), "TND", "TND", "bfloat16", 3, True, False,
     "both", B2),
    ("sbs=16-mode0-no-lse", npu_shape((2, 1), (700, 300), 16, 40, block_size=128, sbs=16), "BSND", "PA_BSND",
     "float16", 0, False, True, "both", B2),
    ("empty-rows-act_q>act_kv", npu_shape((6, 2), (3, 0), 16, 8, block_size=16), "BSND", "PA_BSND", "bfloat16", 3,
     True, True, "both", B4),
    ("prefill-N1=128-K=16", npu_shape((4,), (300,), 128, 16, block_size=32), "BSND", "PA_BSND", "float16", 3, True,
     True, "in_order", B4),
    # decode rows split over the AICs (flash-decoding) with an empty row (act_kv = 0), rows
    # outside every batch and -1 tails
    ("split-rows-empty-and-outside", npu_shape((2, 1), (3000, 0), 16, 1024, block_size=128, s1_pad=1),
     "BSND", "PA_BSND", "bfloat16", 3, True, True, "both", B2),
    # N1 = 128, two rows of two tiles per group: a row's first tile copied into acc, then a
    # rescaled add; the second row starts with every S / O queue buffer used once
    ("N1=128-two-rows-of-two-tiles-per-group", npu_shape((40,), (300,), 128, 256, block_size=128),
     "BSND", "PA_BSND", "bfloat16", 3, True, True, "in_order", B4),
    # 8 decode rows x 2 splits, N1 = 128: 72 combine items of 15 heads on 48 AIVs, so an AIV
    # loads its next item's accs while it combines one (combine_buffers = 2), and an empty row
    # (act_kv = 0) takes the zeros path with the next item's copy in flight
    ("combine-two-items-per-aiv", npu_shape((1,) * 8, (300,) * 7 + (0,), 128, 256, block_size=128),
     "BSND", "PA_BSND", "bfloat16", 3, True, True, "in_order", B2),
    ("BSND-query-TND-kv-mode0", npu_shape((2, 3), (260, 90), 16, 64), "TND", "PA_BSND", "float16", 0, True, False,
     "both", B4),
]


def run_emu(args, mode, lse, order, soc):
    result = core.run_emu(**args, sparse_mode=mode, return_softmax_lse=lse, order=order, soc=soc)
    return result[:-1], result[-1]


def flat_rows(args):
    q = args["query"]
    return q.shape[0] if args["layout_query"] == "TND" else q.shape[0] * q.shape[1]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_matches_reference(case):
    _, shape, lq, lkv, dtype, mode, lse, vik, order, soc = case
    args = make(shape, lq, lkv, dtype, seed=len(shape.act_q) + mode, value_is_key=vik)
    outs, report = run_emu(args, mode, lse, order, soc)
    assert outs[0].dtype == args["query"].dtype
    assert_matches(outs, args, dtype, mode, lse=lse)
    if not lse:
        assert outs[1] is None and outs[2] is None
    assert report["kernel_name"] == "sparse_flash_attention_kernel"
    assert len(report["orders"]) == (2 if order == "both" else 1)
    tiling = core.kernel_tiling(**args, sparse_mode=mode, return_softmax_lse=lse, soc=soc)
    # MIX 1:2: one group per AIC at most, the units (splits of the flat query rows) shared out over them
    assert report["block_dim"] == tiling["block_dim"] == min(flat_rows(args) * tiling["splits"], AICS[soc])
    assert 0 < report["max_ub_high_water"] <= tiling["ub_bytes"] <= 196608


# Several units per AIC (the AIC runs its units' tiles as one stream: the next unit's first Q.K^T
# before the last P.V of a unit; the AIVs its first softmax before that unit's last accumulate and
# write, keeping its m / l): (id, shape, soc, tiling wanted). Split decode rows under the balanced
# split (row_tiles: each AIC takes an equal run of the rows' tiles laid end to end, a unit per row
# it meets): 30 rows of 10 tiles on 20 AICs (15 tiles each: rows meeting 1 or 2 ranges), one-tile
# units (direct P.V into the partial) and units without positions between others (act_kv = 0;
# act_kv = 1: the row's first piece is empty, E < K); 13 rows of 10 tiles on 24 AICs (5.4 tiles
# each: rows meeting 2 or 3 ranges) with E < K, empty rows and -1 tails; whole rows (splits = 1),
# 3 per AIC, with empty rows (causal, act_q > act_kv), one-tile rows and -1 tails. And the
# equal split with two rows per AIC or more (41 decode rows on 20 AICs: the balanced split is not
# considered): 4 - 5 units per AIC, a row's two splits often on one AIC, whose second unit keeps
# the q tile in L1 (Cube::ProcessRow's held_), short rows among long ones.
UNIT_CASES = [
    ("balanced-one-tile-and-empty-between", npu_shape((1,) * 30, (400, 2100, 0, 150, 1, 60) * 5, 16, 2048,
                                                      block_size=128), B4,
     {"splits": 2, "row_tiles": 10, "block_dim": 20}, {1, 2}),
    ("balanced-rows-meet-three-ranges",
     npu_shape((1,) * 13, (2100, 900, 0, 2100, 1, 300, 2100, 150, 2100, 60, 2100, 2100, 700), 16, 2048,
               block_size=128), B2, {"splits": 3, "row_tiles": 10, "block_dim": 24}, {2, 3}),
    ("whole-rows-three-per-aic", npu_shape((30, 30), (400, 12), 16, 256, block_size=128), B4,
     {"splits": 1, "row_tiles": 0, "units_per_core": 3, "block_dim": 20}, None),
    ("equal-split-same-row-on-one-aic", npu_shape((1,) * 41, (2100, 300, 40, 0, 700) * 8 + (150,), 16, 2048,
                                                  block_size=128), B4,
     {"splits": 2, "row_tiles": 0, "units_per_core": 4, "cores_with_extra": 2, "block_dim": 20}, None),
]


@pytest.mark.parametrize("case", UNIT_CASES, ids=lambda c: c[0])
def test_units_run_as_one_stream(case):
    _, shape, soc, wanted, met = case
    args = make(shape, "BSND", "PA_BSND", "bfloat16", seed=3)
    tiling = core.kernel_tiling(**args, sparse_mode=3, return_softmax_lse=True, soc=soc)
    assert {k: tiling[k] for k in wanted} == wanted
    if tiling["row_tiles"]:
        pieces = [len(p) for p in balanced_split(flat_rows(args), tiling["row_tiles"], tiling["block_dim"])]
        assert set(pieces) == met  # the AIC ranges the rows meet
    outs, _ = run_emu(args, 3, True, "in_order", soc)
    assert_matches(outs, args, "bfloat16", 3, lse=True)


def balanced_split(rows, t, aics):
    """The balanced split (host/tiling.cpp, kernel/sparse_flash_attention_rows.h) by brute force:
    per row its pieces (aic, first tile, end tile) in the row, in order."""
    total = rows * t
    out = [[] for _ in range(rows)]
    for g in range(aics):
        lo, hi = g * total // aics, (g + 1) * total // aics
        for r in range(lo // t, (hi - 1) // t + 1 if hi > lo else lo // t):
            out[r].append((g, max(lo, r * t) - r * t, min(hi, (r + 1) * t) - r * t))
    return out


@pytest.mark.parametrize("soc", [B2, B4])
def test_balanced_split_closed_form(soc):
    """The tiling's balanced split: every tile of every row in exactly one AIC's range, the
    AICs' tiles within one of each other, splits the most pieces of a row; the kernel's closed
    forms (GroupOfTile: the AIC of a flat tile, PiecesOf) agree with the brute force. Decode
    N1 = 128, K = 2048, B = 32: the busiest AIC runs 22 tiles (on 24 AICs; the equal split: 3 units
    of 8 tiles, 24) or 26 (20 AICs; whole rows: 32)."""
    for n1, batch in ((128, 32), (16, 13), (16, 30), (128, 7)):
        args = make(npu_shape((1,) * batch, (2100,) * batch, n1, 2048, block_size=128), "BSND", "PA_BSND",
                    "bfloat16")
        t = core.kernel_tiling(**args, sparse_mode=3, soc=soc)
        if not t["row_tiles"]:
            continue
        rt, aics, rows = t["row_tiles"], t["block_dim"], batch
        assert aics == AICS[soc] and rt == -(-2048 // t["tile_keys"])
        split = balanced_split(rows, rt, aics)
        per_aic = [0] * aics
        for r, pieces in enumerate(split):
            assert pieces[0][1] == 0 and pieces[-1][2] == rt  # the row's tiles covered in order
            assert all(a[2] == b[1] and b[0] == a[0] + 1 for a, b in zip(pieces, pieces[1:]))
            for s, (g, a, b) in enumerate(pieces):
                per_aic[g] += b - a
                # the kernel's piece index: g - GroupOfTile(first tile of the row)
                group_of = lambda v: ((v + 1) * aics - 1) // (rows * rt)
                assert group_of(r * rt) == pieces[0][0] and g - group_of(r * rt) == s
            assert len(pieces) == ((r + 1) * rt * aics - 1) // (rows * rt) - (r * rt * aics + aics - 1) // (rows * rt) + 1
        assert max(per_aic) - min(per_aic) <= 1 and sum(per_aic) == rows * rt
        assert t["splits"] == max(len(p) for p in split)
        if (n1, batch) == (128, 32):
            assert max(per_aic) == {B2: 22, B4: 26}[soc]


def test_the_api_runs_the_emulator():
    """backend="emu" through the public function: the same bytes as core.run_emu."""
    case = CASES[3]
    args = make(case[1], "BSND", "PA_BSND", "float16", seed=2)
    out, m, l = sparse_flash_attention(**args, sparse_mode=3, return_softmax_lse=True, backend="emu")
    assert_matches((out, m, l), args, "float16", 3)
    outs, _ = run_emu(args, 3, True, "in_order", B2)
    assert out.tobytes() == outs[0].tobytes() and m.tobytes() == outs[1].tobytes()


def gathered_rows(args, mode, tile_keys):
    """Rows the AIC gathers: each row's positions in tiles of tile_keys (the last one padded)."""
    kw = reference_args(args)
    key_rows = args["key"].shape[1] if args["layout_kv"] == "BSND" else None
    total = 0
    for row in reference.rows(args["query"], args["sparse_indices"], kw.get("actual_seq_lengths_query"),
                              kw.get("actual_seq_lengths_kv"), key_rows, args["layout_query"], args["layout_kv"],
                              mode, args["sparse_block_size"]):
        total += math.ceil(len(row.positions) / tile_keys) * tile_keys
    return total


def test_value_is_key_reads_each_latent_row_once():
    """With value aliasing key each gathered latent row serves as K and V: one 1 KiB DMA per
    gathered position (sbs = 1, positions never adjacent: every run is one position); a separate
    value costs exactly one more 1 KiB DMA per gathered position. Rows of a tile past the row's
    last position are gathered too (copies of it), so each row gathers its tiles in full."""
    shape = npu_shape((2, 1), (500, 300), 16, 64, block_size=64)
    args = make(shape, "BSND", "PA_BSND", "bfloat16", seed=9)
    rng = np.random.default_rng(1)
    idx = args["sparse_indices"].reshape(-1, shape.k)
    for row in range(idx.shape[0]):  # even positions only (mode 0: all in the window), some -1 tails
        b = row // (idx.shape[0] // 2)
        idx[row] = rng.permutation(shape.act_kv[b] // 2)[:shape.k] * 2
        if row % 2:
            idx[row, 40:] = -1
    for separate in (False, True):
        if separate:
            args["value"] = args["key"].copy()
        _, report = run_emu(args, 0, False, "in_order", B2)
        tiling = core.kernel_tiling(**args, sparse_mode=0)
        assert tiling["value_is_key"] == (0 if separate else 1)
        rows = gathered_rows(args, 0, tiling["tile_keys"])
        latent_dmas = report["totals"]["gm_to_local"]["sizes"].get(D * 2, 0)
        assert latent_dmas == (2 if separate else 1) * rows
        # Q.K^T over D + Dr columns and P.V over D columns of every gathered row, for N1 heads
        assert report["totals"]["cube_macs"] == rows * shape.n1 * (D + DR + D)
        # L1 -> L0 LoadDatas per tile: per Q.K^T column chunk one per q row block and one for K;
        # one per P row block; V's transposed fractals one LoadData per column block or per key
        # block of each P.V output chunk, whichever is fewer (value is key: more key blocks than
        # column blocks per chunk, one per column block; the separate value's narrower tile: one
        # per key block)
        kt, kc, nc = tiling["tile_keys"], tiling["k_chunk"], tiling["n_chunk"]
        q_blocks, chunks = tiling["m_pad"] // 16, -(-(D + DR) // kc)
        per_tile = chunks * (q_blocks + 1) + q_blocks + D // nc * min(nc // 16, kt // 16)
        assert (nc // 16 < kt // 16) == (not separate)
        assert report["totals"]["local_to_local"]["transfers"] == rows // kt * per_tile


def test_tiling_fits_the_platform():
    decode = make(npu_shape((1,) * 32, (4096,) * 32, 128, 2048, block_size=128), "BSND", "PA_BSND", "bfloat16")
    for soc in (B2, B4):
        t = core.kernel_tiling(**decode, sparse_mode=3, soc=soc)
        assert t["block_dim"] == AICS[soc]
        # 32 rows of 16 tiles: the balanced split (512 tiles laid end to end, 22 on the busiest of
        # 24 AICs where the equal split's 3 units of 8 tiles gave 24; 26 on 20 AICs where whole rows
        # gave 32), a row in 2 pieces at most
        assert (t["splits"], t["row_tiles"]) == (2, 16)
        assert t["tile_keys"] % 16 == 0 and t["m_pad"] == 128
        assert 2 * t["m_pad"] * t["tile_keys"] * 4 <= 131072  # two S tiles in L0C
        assert t["ub_bytes"] <= 196608
        # S and O chunks share one queue, so the 128 KiB accumulator leaves room for O copies of
        # 4 heads (8 KiB) with 4 in flight: the accumulate's copies are latency-bound
        assert (t["out_heads"], t["in_buffers"]) == (4, 5)
        # 32 rows x 2 splits: every AIV combines several items, the next one's accs loaded while
        # it combines this one (two of them in the UB)
        assert t["combine_buffers"] == 2
    small = make(npu_shape((1,), (300,), 16, 64), "BSND", "PA_BSND", "float16")
    t = core.kernel_tiling(**small, sparse_mode=3)
    assert t["splits"] == 1 and t["block_dim"] == 1 and t["m_pad"] == 16 and t["heads_per_aiv"] == 8  # K < a tile
    one = make(npu_shape((1,), (5000,), 128, 2048, block_size=128), "BSND", "PA_BSND", "bfloat16")
    t = core.kernel_tiling(**one, sparse_mode=3)
    assert t["splits"] == 2048 // t["tile_keys"] == t["block_dim"]  # one row: a tile per AIC
    prefill = make(npu_shape((48,), (5000,), 16, 512, block_size=128), "BSND", "PA_BSND", "bfloat16")
    assert core.kernel_tiling(**prefill, sparse_mode=3)["splits"] == 1  # 48 rows: 2 per AIC
    # the balanced split only below two rows per AIC (41 rows of 3 tiles on 20 AICs: whole rows,
    # no partials, though its cost would be lower: 7 tiles in 3 units against 3 rows of 3)
    many = make(npu_shape((1,) * 41, (600,) * 41, 16, 512, block_size=128), "BSND", "PA_BSND", "bfloat16")
    t = core.kernel_tiling(**many, sparse_mode=3, soc=B4)
    assert (t["splits"], t["row_tiles"], t["units_per_core"], t["cores_with_extra"]) == (1, 0, 2, 1)


def test_aic_warms_its_first_walk_during_the_check_phase(tmp_path, monkeypatch):
    """While the AIVs check the inputs, every AIC with work loads its first row's q tile into L1
    and reads (scalar GM loads, nothing written) one entry per data-cache line of its first
    tile's indices and block-table entries (kernel/sparse_flash_attention_cube.h, Warm; _gather.h,
    WarmFirstTile): in the emulator's trace both start before the AIC's verdict wait ends, and
    the outputs are still the reference's."""
    import csv

    trace = tmp_path / "trace.csv"
    monkeypatch.setenv("ASCENDC_CPU_TRACE", str(trace))
    args = make(npu_shape((1, 1), (3000, 2000), 16, 512, block_size=128), "BSND", "PA_BSND", "bfloat16", seed=4)
    outs, report = run_emu(args, 3, True, "in_order", B2)
    assert_matches(outs, args, "bfloat16", 3)
    rows = list(csv.DictReader(trace.open()))
    for group in range(report["block_dim"]):
        aic = [r for r in rows if r["type"] == "AIC" and int(r["group"]) == group]
        verdict = max(float(r["done_us"]) for r in aic
                      if r["api"] == "CrossCoreWaitFlag" and r["file"].endswith("check_slots.h"))
        warm = [r for r in aic if r["api"] == "GlobalTensor::GetValue" and r["file"].endswith("_gather.h")]
        assert warm and all(float(r["start_us"]) < verdict for r in warm), group
        # and its first q tile is on its way into L1 (the query's Nd2Nz copies)
        q_tile = [r for r in aic if r["api"] == "DataCopy(Nd2Nz)" and r["file"].endswith("_cube.h")]
        assert float(q_tile[0]["start_us"]) < verdict, group


def test_softmax_reduces_the_next_chunk_while_the_scalar_unit_works(tmp_path, monkeypatch):
    """The AIV's softmax is software-pipelined over its head chunks: the tile maxima of chunk
    k + 1 (its ReduceMaxes) are issued before the scalar unit turns chunk k's maxima into m',
    so in the trace the first ReduceMax of the second chunk starts before the first Exp of the
    first chunk (its stage B; without the pipelining all of chunk k's stage B precedes chunk
    k + 1)."""
    import csv

    trace = tmp_path / "trace.csv"
    monkeypatch.setenv("ASCENDC_CPU_TRACE", str(trace))
    args = make(npu_shape((1,), (300,), 128, 64, block_size=64), "BSND", "PA_BSND", "bfloat16", seed=6)
    tiling = core.kernel_tiling(**args, sparse_mode=3)
    sh = tiling["softmax_heads"]
    assert tiling["heads_per_aiv"] >= 2 * sh  # at least two chunks per AIV
    outs, _ = run_emu(args, 3, True, "in_order", B2)
    assert_matches(outs, args, "bfloat16", 3)
    rows = list(csv.DictReader(trace.open()))
    for sub in ("0", "1"):
        aiv = sorted((r for r in rows if r["type"] == "AIV" and r["group"] == "0" and r["sub"] == sub),
                     key=lambda r: float(r["start_us"]))
        maxes = [float(r["start_us"]) for r in aiv if r["api"] == "ReduceMax" and r["file"].endswith("_vector.h")]
        exps = [float(r["start_us"]) for r in aiv if r["api"] == "Exp" and r["file"].endswith("_vector.h")]
        assert maxes[sh] < exps[0], sub


@pytest.mark.parametrize("n1,topk", [(128, 300), (16, 450)])
def test_softmax_sums_fold_to_lanes(tmp_path, monkeypatch, n1, topk):
    """The AIV keeps each head's softmax sum l as 8 lanes: per tile the exponentials are folded
    to 8 columns by level-0 Adds over all of a chunk's heads (no per-head ReduceSum), the lanes
    rescaled by alpha and added, and summed once at the row's end. One row per group (no
    splits) of three tiles, the last one padded, at tile_keys 128 (N1 = 128) and 208 (N1 = 16:
    folds of 104, 48, 24, 8, 8 columns); softmax_sum within the contract's tolerance."""
    import csv

    trace = tmp_path / "trace.csv"
    monkeypatch.setenv("ASCENDC_CPU_TRACE", str(trace))
    args = make(npu_shape((20,), (700,), n1, topk, block_size=64), "BSND", "PA_BSND", "bfloat16", seed=3)
    tiling = core.kernel_tiling(**args, sparse_mode=3, return_softmax_lse=True, soc=B4)
    assert (tiling["splits"], tiling["tile_keys"]) == (1, {128: 128, 16: 208}[n1])
    assert 2 * tiling["tile_keys"] < topk < 3 * tiling["tile_keys"]
    outs, _ = run_emu(args, 3, True, "in_order", B4)
    assert_matches(outs, args, "bfloat16", 3, lse=True)
    aiv = [r for r in csv.DictReader(trace.open()) if r["type"] == "AIV" and r["file"].endswith("_vector.h")]
    assert not [r for r in aiv if r["api"] == "ReduceSum"]
    assert [r for r in aiv if r["api"] == "Add"]


def test_unit_count_reads_index_chunks_through_an_s_o_buffer():
    """The AIV counts a unit's positions from its index chunks copied into one buffer of the
    S / O queue (no UB of their own): at N1 = 1 that buffer holds 512 int32, fewer than the
    check phase's index chunk (1024), so a row of 1500 entries (one split) is counted in three
    chunks."""
    args = make(npu_shape((24,), (3000,), 1, 1500, block_size=64), "BSND", "PA_BSND", "bfloat16", seed=5)
    tiling = core.kernel_tiling(**args, sparse_mode=3, return_softmax_lse=True, soc=B2)
    assert (tiling["splits"], tiling["index_chunk"]) == (1, 1024)
    assert max(tiling["softmax_heads"] * tiling["tile_keys"], tiling["out_heads"] * D) == 512
    outs, _ = run_emu(args, 3, True, "in_order", B2)
    assert_matches(outs, args, "bfloat16", 3, lse=True)


def test_aic_prepares_the_next_unit_before_the_last_p_v(tmp_path, monkeypatch):
    """An AIC with several units loads the next unit's q tile and gathers its first tile after
    the current unit's last Q.K^T, before its last P.V waits for P (no drain of the cube /
    vector pipeline between units): in the trace all of the AIC's reads of the row geometry and
    the indices (the walk of both units) precede the end of its first wait for P."""
    import csv

    trace = tmp_path / "trace.csv"
    monkeypatch.setenv("ASCENDC_CPU_TRACE", str(trace))
    args = make(npu_shape((30,), (100,), 16, 32, block_size=16), "BSND", "PA_BSND", "bfloat16", seed=7)
    tiling = core.kernel_tiling(**args, sparse_mode=3)
    assert (tiling["splits"], tiling["units_per_core"], tiling["cores_with_extra"]) == (1, 1, 6)
    outs, _ = run_emu(args, 3, True, "in_order", B2)
    assert_matches(outs, args, "bfloat16", 3)
    aic = sorted((r for r in csv.DictReader(trace.open()) if r["type"] == "AIC" and r["group"] == "0"),
                 key=lambda r: float(r["start_us"]))
    waits = [float(r["done_us"]) for r in aic if r["api"] == "CrossCoreWaitFlag" and r["file"].endswith("_cube.h")]
    walk = [float(r["start_us"]) for r in aic if r["api"] == "GlobalTensor::GetValue" and r["file"].endswith("_rows.h")]
    assert len(waits) == 2  # two units of one tile: one wait for P each
    assert max(walk) < waits[0]


def early_heads(t):
    """Mirror of kernel/sparse_flash_attention_handshake.h EarlyHeads: P rows per AIV that the
    AIVs publish before their last softmax chunk (0: P in one hand-off)."""
    hpa, sh = t["heads_per_aiv"], t["softmax_heads"]
    if t["heads"] != t["m_pad"] or t["heads"] != 2 * hpa or hpa % 16 or sh <= 0 or sh % 16:
        return 0
    chunks = -(-hpa // sh)
    return 0 if chunks < 2 else (chunks - 1) * sh


@pytest.mark.parametrize("n1", [128, 64])
def test_p_in_two_hand_offs(tmp_path, monkeypatch, n1):
    """Where both AIVs' heads fill whole 16-row blocks and an AIV has two softmax chunks or more,
    the AIVs publish P of a tile in two hand-offs (kProbsEarly after all chunks but the last,
    kProbsReady after the last) and the AIC loads the early rows into L1 and L0A before the
    AIVs' last chunk is out: per tile four Nd2Nz copies of P rows on the AIC (two row ranges per
    hand-off), and in the trace the first of a tile's starts before either AIV's last P copy of
    that tile (not on the first tile: the AIC then still walks and gathers tile 2). Each early / late row block lands at its place in L0A, so the outputs are
    the reference's (one row of several tiles per group, -1 tails: N1 = 128, early 48 of 64
    heads per AIV, 128 keys per tile; N1 = 64, 16 of 32, 176 keys)."""
    import csv

    trace = tmp_path / "trace.csv"
    monkeypatch.setenv("ASCENDC_CPU_TRACE", str(trace))
    args = make(npu_shape((20,), (700,), n1, 300, block_size=64), "BSND", "PA_BSND", "bfloat16", seed=8)
    tiling = core.kernel_tiling(**args, sparse_mode=3, return_softmax_lse=True, soc=B4)
    t = dict(tiling, heads=n1)
    e = early_heads(t)
    assert e == {128: 48, 64: 16}[n1] and tiling["splits"] == 1 and tiling["tile_keys"] == {128: 128, 64: 176}[n1]
    outs, _ = run_emu(args, 3, True, "in_order", B4)
    assert_matches(outs, args, "bfloat16", 3, lse=True)
    rows = list(csv.DictReader(trace.open()))
    aic = sorted((r for r in rows if r["type"] == "AIC" and r["group"] == "0"), key=lambda r: float(r["start_us"]))
    nd2nz = [r for r in aic if r["api"] == "DataCopy(Nd2Nz)" and r["file"].endswith("_cube.h")]
    q_line = nd2nz[0]["line"]  # the q tile's (loaded first, during the check phase)
    p_copies = [float(r["start_us"]) for r in nd2nz if r["line"] != q_line]
    assert len(p_copies) >= 8 and len(p_copies) % 4 == 0  # two row ranges per hand-off, two hand-offs per tile
    chunks = -(-tiling["heads_per_aiv"] // tiling["softmax_heads"])
    for sub in ("0", "1"):
        p_out = sorted(float(r["start_us"]) for r in rows if r["type"] == "AIV" and r["group"] == "0"
                       and r["sub"] == sub and r["pipe"] == "MTE3" and r["api"] == "DataCopy"
                       and r["file"].endswith("_vector.h"))
        tiles = len(p_copies) // 4
        # some tile's early rows are on their way while the AIV's last chunk of it is not out
        assert any(p_copies[4 * k] < p_out[k * chunks + chunks - 1] for k in range(tiles)), sub
    # On MTE1 only V's first P.V chunk is loaded ahead of P's rows (the second one's L0B buffer
    # waits for the last Q.K^T Mmad): the run of V loads just before a tile's P rows is one
    # chunk's (more only where the last P.V's chunks precede it, no Q.K^T between: a unit's last
    # tile)
    source = Path(nd2nz[0]["file"]).read_text().splitlines()
    p_line = str(1 + next(i for i, x in enumerate(source) if "AscendC::LoadData(a[" in x))
    v_line = str(1 + next(i for i, x in enumerate(source) if "AscendC::LoadData(b[" in x))
    kb, cb = tiling["tile_keys"] // 16, tiling["n_chunk"] // 16
    per_chunk = cb if cb < kb else kb  # LoadValue: one LoadData per column or per key block
    mte1 = [{p_line: "P", v_line: "V"}.get(r["line"], "o") for r in aic if r["pipe"] == "MTE1"]
    runs = []
    for i, x in enumerate(mte1):
        if x == "P" and i and mte1[i - 1] == "V":
            j = i
            while j and mte1[j - 1] == "V":
                j -= 1
            runs.append(i - j)
    assert runs and min(runs) == per_chunk, runs


def test_q_chunk_loads_while_the_tile_is_gathered(tmp_path, monkeypatch):
    """The AIC loads q's first Q.K^T column chunk into L0A before it waits for the gathered kv
    tile (it needs only the q tile in L1), so in the trace some q LoadData starts while a
    gather copy of the AIC is still in flight (without that, every one of a tile's q loads
    follows the tile's last gather copy on MTE1, and the next gather starts only after the
    tile's loads); outputs still the reference's."""
    import csv

    trace = tmp_path / "trace.csv"
    monkeypatch.setenv("ASCENDC_CPU_TRACE", str(trace))
    args = make(npu_shape((20,), (700,), 128, 300, block_size=64), "BSND", "PA_BSND", "bfloat16", seed=9)
    outs, _ = run_emu(args, 3, True, "in_order", B4)
    assert_matches(outs, args, "bfloat16", 3, lse=True)
    aic = [r for r in csv.DictReader(trace.open()) if r["type"] == "AIC" and r["group"] == "0"]
    gather = [(float(r["start_us"]), float(r["done_us"])) for r in aic
              if r["api"] == "DataCopy(Nd2Nz)" and r["file"].endswith("_gather.h")]
    zz_line = min((r for r in aic if r["api"] == "LoadData" and r["file"].endswith("_cube.h")),
                  key=lambda r: float(r["start_us"]))["line"]  # the first LoadData: q's, in LoadZz
    q_loads = [float(r["start_us"]) for r in aic if r["api"] == "LoadData" and r["line"] == zz_line]
    assert gather and q_loads
    assert any(s <= q < d for q in q_loads for s, d in gather)
