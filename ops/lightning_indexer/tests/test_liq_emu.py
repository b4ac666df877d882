"""The AscendC kernel (ops/lightning_indexer/kernel/lightning_indexer_quant_kernel.cpp) through the
emulator (910B2 / 910B4 presets; its race detector, hang and event-id checks on every case):

* against the NumPy reference of the spec's "NPU numerics" (reference.npu_scores: float16 a and
  w * qs, float32 head sums in head order, ks after): indices and values exactly equal, ties to
  the smaller index;
* against the exact contract (float64) with the spec's tolerance for the float16 path,
  tol = 2^-9 * M.

Layouts BSND / TND query x PA_BSND / BSND / TND key, sparse modes 0 / 3, -1 tails and empty rows,
ties (keys from a small pool), N1 in {1, 8, 20, 64}, K up to 2048, decode rows whose keys are
split over the cores and merged (halves), prefill rows, the strided PA key; bad scales and
w * qs beyond float16 leave the outputs untouched; the NPU limits are refused.
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_ops.common.loader import load_native

from liq_cases import Shape, assert_topk, make, reference_rows

core = load_native("ascend_ops.lightning_indexer_quant", "core")
if not core.HAS_EMU:
    pytest.skip("the emulator build is off (AOP_WITH_EMU): no emu backend to test", allow_module_level=True)

D = 128
FP16_RTOL = 2.0 ** -9  # the spec's tolerance for an implementation with float16 intermediates
B2, B4 = "Ascend910B2", "Ascend910B4"


def make16(shape, layout_query, layout_key, seed, **kw):
    """A case with float16 weights and scales (the NPU's dtypes)."""
    return make(shape, layout_query, layout_key, weights_dtype="float16", scale_dtype="float16", seed=seed, **kw)


def run_emu(args, mode, order="in_order", soc=B2, **kw):
    return core.run_emu(**args, sparse_mode=mode, return_value=True, order=order, soc=soc, **kw)


def assert_npu_exact(idx, val, args, mode, k):
    """Indices and values equal the NPU-numerics reference's (ties to the smaller index)."""
    want_idx = np.full(idx.shape, -1, dtype=np.int32)
    want_val = np.full(val.shape, -np.inf, dtype=np.float32)
    for row in reference_rows(args, mode, numerics="npu"):
        order = np.lexsort((np.arange(len(row.scores)), -row.scores))[:k]
        want_idx[row.out][:len(order)] = order
        want_val[row.out][:len(order)] = row.scores[order]
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_array_equal(val, want_val)


# (shape, layout_query, layout_key, sparse_mode, order, soc)
CASES = [
    (Shape((1, 1, 1), (37, 200, 5), 64, D, 64, name="decode-N64-PA16"), "BSND", "PA_BSND", 3, "both", B2),
    (Shape((1, 1), (1000, 3000), 64, D, 2048, block_size=128, name="decode-K2048-split"),
     "BSND", "PA_BSND", 3, "in_order", B2),
    (Shape((2, 1), (700, 33), 8, D, 100, block_size=64, name="decode-N8-mode0"), "TND", "PA_BSND", 0, "both", B4),
    (Shape((3, 0, 2), (0, 40, 17), 20, D, 8, name="empty-batches-N20"), "BSND", "BSND", 3, "both", B2),
    (Shape((5, 2), (300, 77), 1, D, 64, extra_q=2, name="N1=1-TND-TND"), "TND", "TND", 3, "both", B4),
    (Shape((2, 4), (600, 33), 8, D, 40, extra_q=1, name="BSND-TND-mode0"), "BSND", "TND", 0, "both", B2),
    (Shape((20, 5), (12, 40), 8, D, 16, name="act_s1>act_s2"), "BSND", "BSND", 3, "both", B4),
    (Shape((16,), (500,), 16, D, 256, block_size=32, extra_q=0, name="prefill-S1=16"), "TND", "PA_BSND", 3,
     "in_order", B2),
    (Shape((4, 3), (90, 45), 64, D, 2048, block_size=16, name="K-above-visible"), "BSND", "PA_BSND", 0, "both", B2),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: str(c[0]))
def test_matches_npu_numerics_and_contract(case):
    shape, lq, lk, mode, order, soc = case
    args = make16(shape, lq, lk, seed=hash(str(shape)) % 1000)
    idx, val, report = run_emu(args, mode, order=order, soc=soc)
    assert idx.dtype == np.int32 and val.dtype == np.float32
    assert_npu_exact(idx, val, args, mode, shape.k)
    assert_topk(idx, val, reference_rows(args, mode), shape.k, rtol=FP16_RTOL)
    # every visible key's q.k went through the int8 cube path (rows padded to 16, N1 to 16)
    seen = sum(len(r.scores) for r in reference_rows(args, mode))
    assert report["totals"]["cube_int8_macs"] >= seen * shape.n1 * D


def test_ties_go_to_the_smaller_index():
    """Keys from a pool of 5 (equal keys and scales score exactly equally): every tie, also at the
    K-th place, goes to the smaller index, in every key layout."""
    shape = Shape((2, 1), (300, 77), 16, D, 40, block_size=16)
    for lk in ("PA_BSND", "BSND", "TND"):
        args = make16(shape, "BSND", lk, seed=9, key_pool=5)
        idx, val, _ = run_emu(args, 0, order="both")
        assert_npu_exact(idx, val, args, 0, shape.k)
        assert (np.diff(val[0, 0, 0, :10]) == 0).any(), "the case should hold ties"


def test_paired_key_tiles_keep_key_order():
    """Full key tiles of 128 keys are loaded as pairs of keys (kernel/liq_pairs.h), so the AIC
    scores them in paired order; the AIV puts the scores back in key order before it sorts: ties
    (keys from a pool of 5) still go to the smaller index, with partial last tiles (unpaired) and
    causal limits inside a group of 32, in every key layout."""
    shape = Shape((2, 1), (300, 77), 16, D, 40, block_size=128)
    for lk in ("PA_BSND", "BSND", "TND"):
        args = make16(shape, "BSND", lk, seed=9, key_pool=5)
        assert core.kernel_tiling(**args, sparse_mode=3, soc=B2)["tile_keys"] == 128
        for mode in (0, 3):
            idx, val, _ = run_emu(args, mode)
            assert_npu_exact(idx, val, args, mode, shape.k)
            assert (np.diff(val[0, 0, 0, :10]) == 0).any(), "the case should hold ties"


@pytest.mark.parametrize("shape,halves", [
    (Shape((1,), (16384,), 64, D, 2048, block_size=128, name="decode-B1-S2=16k"), 0),
    (Shape((1, 1, 1, 1), (8192, 8000, 5000, 8192), 64, D, 2048, block_size=64, name="decode-B4-S2=8k"), 1),
], ids=str)
def test_split_keys_are_merged(shape, halves):
    """Decode rows with many keys: each row's keys are split over the AICs and the partial lists
    merged after SyncAll; with halves a group takes two splits of a row, one per AIV (its AIC
    alternates their blocks)."""
    args = make16(shape, "BSND", "PA_BSND", seed=4)
    tiling = core.kernel_tiling(**args, sparse_mode=3, soc=B2)
    assert tiling["splits"] > 1 and tiling["halves"] == halves, tiling
    # splits in whole key tiles: decode-B4's end inside a block (ceil(8192 / 6) -> 1408 keys)
    assert tiling["split_align"] == tiling["tile_keys"] < tiling["block_keys"], tiling
    idx, val, _ = run_emu(args, 3)
    assert_npu_exact(idx, val, args, 3, shape.k)
    assert_topk(idx, val, reference_rows(args, 3), shape.k, rtol=FP16_RTOL)


def test_strided_pa_key():
    """The K half of a [num_blocks, 2, block_size, 1, D] cache: the kernel addresses block i at
    i * key_block_stride, giving what the contiguous copy gives."""
    shape = Shape((2, 1), (70, 33), 8, D, 16, block_size=16)
    args = make16(shape, "BSND", "PA_BSND", seed=6)
    key = args["key"]
    kv = np.full((key.shape[0], 2) + key.shape[1:], 7, dtype=key.dtype)
    kv[:, 0] = key
    strided = dict(args, key=kv[:, 0])
    assert not strided["key"].flags.c_contiguous
    tiling = core.kernel_tiling(**strided, sparse_mode=3, soc=B2)
    assert tiling["key_block_stride"] == 2 * key[0].size
    idx, val, _ = run_emu(strided, 3, order="both")
    idx2, val2, _ = run_emu(args, 3)
    np.testing.assert_array_equal(idx, idx2)
    np.testing.assert_array_equal(val, val2)
    assert_npu_exact(idx, val, args, 3, shape.k)


@pytest.mark.parametrize("name,poke,words", [
    ("qs-negative", ("query_dequant_scale", (0, 0, 3), -0.5), ["query_dequant_scale", ">= 0", "-0.5"]),
    ("qs-nan", ("query_dequant_scale", (1, 0, 0), np.nan), ["query_dequant_scale", "nan"]),
    ("ks-inf", ("key_dequant_scale", None, np.inf), ["key_dequant_scale", "inf"]),
    ("w-times-qs-overflow", ("weights", (0, 0, 2), 60000.0), ["weights * query_dequant_scale", "float16"]),
])
def test_bad_scales_leave_outputs_untouched(name, poke, words):
    shape = Shape((1, 1), (40, 20), 8, D, 16, block_size=16)
    args = make16(shape, "BSND", "PA_BSND", seed=2)
    field, at, value = poke
    a = args[field].copy()
    if at is None:  # the scale of logical key 5 of batch 0 (visible), through the block table
        a[args["block_table"][0, 0], 5] = value
    else:
        a[at] = value
    args[field] = a
    if name == "w-times-qs-overflow":  # 60000 * 2 rounds to float16 infinity
        qs = args["query_dequant_scale"].copy()
        qs[at] = 2.0
        args["query_dequant_scale"] = qs
    lead = args["query"].shape[:2]
    out_idx = np.full(lead + (1, shape.k), 12345, dtype=np.int32)
    out_val = np.full(lead + (1, shape.k), 7.5, dtype=np.float32)
    with pytest.raises(ValueError) as e:
        core.run_emu(**args, sparse_mode=3, return_value=True, sparse_indices=out_idx, sparse_values=out_val)
    msg = str(e.value)
    assert msg.startswith("lightning_indexer_quant:"), msg
    for w in words:
        assert w in msg, (w, msg)
    assert (out_idx == 12345).all() and (out_val == 7.5).all()


@pytest.mark.parametrize("name,change,exc,words", [
    ("N1=65", dict(n1=65), ValueError, ["N1 <= 64", "65"]),
    ("D=64", dict(d=64), ValueError, ["D = 128", "64"]),
    ("K=2049", dict(k=2049), ValueError, ["sparse_count", "2048", "2049"]),
    ("block_size=8", dict(block_size=8), ValueError, ["block_size", "multiple of 16", "8"]),
    ("weights-float32", dict(weights_dtype="float32"), TypeError, ["weights", "float16", "float32"]),
    ("ks-float32", dict(scale_dtype="float32"), TypeError, ["float16", "float32"]),
])
def test_npu_limits_are_refused(name, change, exc, words):
    dims = dict(n1=8, d=D, k=16, block_size=16)
    dtypes = dict(weights_dtype="float16", scale_dtype="float16")
    for key, v in change.items():
        (dtypes if key.endswith("dtype") else dims)[key] = v
    shape = Shape((1, 1), (40, 20), dims["n1"], dims["d"], dims["k"], block_size=dims["block_size"])
    args = make(shape, "BSND", "PA_BSND", seed=1, **dtypes)
    with pytest.raises(exc) as e:
        core.run_emu(**args, sparse_mode=3)
    msg = str(e.value)
    assert msg.startswith("lightning_indexer_quant:"), msg
    for w in words:
        assert w in msg, (w, msg)
