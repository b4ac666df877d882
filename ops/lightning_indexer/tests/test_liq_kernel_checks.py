"""The AscendC kernel's own data checks (the float op's check phase, shared, and this kernel's
checks of the scales), with the host's data checks off (host_data_checks=False, as on the NPU
where nothing is read on the host): bad lengths, block ids, query / key scales and weights * query
scales raise the host's exception, and every output byte is left as it was (the AIC abandons its
first key block before publishing it, the AIVs write nothing); scales the contract does not check
pass. Decode rows with key splits (several units per row) and prefill rows, both sparse modes."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_ops.common.loader import load_native

from liq_cases import Shape, make

core = load_native("ascend_ops.lightning_indexer_quant", "core")
if not core.HAS_EMU:
    pytest.skip("the emulator build is off (AOP_WITH_EMU): no emu backend to test", allow_module_level=True)

D = 128
SHAPES = [
    Shape((1, 1), (3000, 700), 64, D, 256, block_size=128, name="decode-split"),
    Shape((6, 3), (90, 45), 8, D, 32, block_size=16, name="prefill"),
    # halves, 3 blocks per split (batch 1's splits end inside a block): each AIC computes two
    # blocks before the verdict (kernel/liq_cube.h's check-free prefix) and publishes neither
    Shape((1, 1, 1), (9000, 8000, 7000), 16, D, 256, block_size=128, name="decode-prefix"),
]


def test_prefix_shape_has_blocks_pending_at_the_verdict():
    args = make(SHAPES[2], "BSND", "PA_BSND", weights_dtype="float16", scale_dtype="float16", seed=7)
    t = core.kernel_tiling(**args, sparse_mode=3, soc="Ascend910B2")
    split_keys = -(-9000 // t["splits"])
    assert t["halves"] == 1 and t["slots"] == 4 and split_keys > t["block_keys"], t
    # without halves too: four slots, a prefix of two blocks (the float op has two slots there)
    args = make(SHAPES[0], "BSND", "PA_BSND", weights_dtype="float16", scale_dtype="float16", seed=7)
    t = core.kernel_tiling(**args, sparse_mode=3, soc="Ascend910B2")
    assert t["halves"] == 0 and t["splits"] > 1 and t["slots"] == 4, t


def poke(name, index, value):
    def mutate(args):
        a = args[name].copy()
        a[index] = value
        args[name] = a
        return args
    return mutate


CASES = [  # (id, mutation, exception, words)
    ("block-id-beyond", poke("block_table", (1, 0), 10**6), IndexError, ["block_table", "1000000"]),
    ("block-id-negative", poke("block_table", (0, 1), -3), IndexError, ["block_table", "-3"]),
    ("key-length-beyond", poke("actual_seq_lengths_key", 0, 10**6), ValueError, ["actual_seq_lengths_key"]),
    ("query-length-negative", poke("actual_seq_lengths_query", 1, -1), ValueError, ["actual_seq_lengths_query"]),
]


@pytest.mark.parametrize("mode", (0, 3))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_kernel_check_raises_and_writes_nothing(case, shape, mode):
    name, mutate, exc, words = case
    args = mutate(make(shape, "BSND", "PA_BSND", weights_dtype="float16", scale_dtype="float16", seed=7))
    with pytest.raises(exc) as host:  # the host's own check: the message the kernel's record must give
        core.run_cpu(**args, sparse_mode=mode)
    lead = args["query"].shape[:2]
    out_idx = np.full(lead + (1, shape.k), 12345, dtype=np.int32)
    out_val = np.full(lead + (1, shape.k), 7.5, dtype=np.float32)
    with pytest.raises(exc) as kernel:
        core.run_emu(**args, sparse_mode=mode, return_value=True, sparse_indices=out_idx, sparse_values=out_val,
                     host_data_checks=False, order="both")
    assert str(kernel.value) == str(host.value)
    for w in words:
        assert w in str(kernel.value)
    assert (out_idx == 12345).all() and (out_val == 7.5).all()


# The kernel's checks of the scales (kernel/liq_scale_check.h): query scales and weights * query
# scales of the rows in a batch (on the AIVs' weights pass), key scales of every visible key
# (split over the AIVs by flat (batch, key) position). The reference exception is the host's
# (run_emu with its host checks: check_data_kernel).
def key_scale_index(args, b, j):
    """The key_dequant_scale element of logical key j of batch b."""
    ks, layout = args["key_dequant_scale"], args["layout_key"]
    if layout == "PA_BSND":
        bs = args["key"].shape[1]
        at = (int(args["block_table"][b, j // bs]), j % bs, 0)
    elif layout == "BSND":
        at = (b, j, 0)
    else:
        ends = args["actual_seq_lengths_key"]
        at = ((int(ends[b - 1]) if b else 0) + j, 0)
    return at + (0,) * (ks.ndim - len(at))


def query_index(args, b, s, h):
    if args["layout_query"] == "BSND":
        return (b, s, h)
    ends = args["actual_seq_lengths_query"]
    return ((int(ends[b - 1]) if b else 0) + s, h)


def seen(args, b, mode):
    """Keys the last row of batch b sees."""
    lq, lk = args["actual_seq_lengths_query"], args["actual_seq_lengths_key"]
    tnd_q, tnd_k = args["layout_query"] == "TND", args["layout_key"] == "TND"
    s1 = int(lq[b]) - (int(lq[b - 1]) if tnd_q and b else 0)
    s2 = int(lk[b]) - (int(lk[b - 1]) if tnd_k and b else 0)
    return s2 if s1 > 0 else 0  # the last row sees act_s2 keys in both modes


def set_at(args, name, index, value):
    a = args[name].copy()
    a[index] = value
    args[name] = a


def bad_qs(value, b=1, s=0, h=3):
    return lambda args, mode: set_at(args, "query_dequant_scale", query_index(args, b, s, h), value)


def bad_ks(value, b, where):
    """where(seen) -> j: a visible key of batch b."""
    return lambda args, mode: set_at(args, "key_dequant_scale", key_scale_index(args, b, where(seen(args, b, mode))),
                                     value)


def overflow(b=0, s=0, h=2):
    def mutate(args, mode):
        set_at(args, "weights", query_index(args, b, s, h), -60000.0)  # * 2 = -120000: beyond float16
        set_at(args, "query_dequant_scale", query_index(args, b, s, h), 2.0)
    return mutate


def both(*mutations):
    def mutate(args, mode):
        for m in mutations:
            m(args, mode)
    return mutate


SCALE_CASES = [  # (id, mutation, words): the first error in the host's order is the one raised
    ("qs-negative", bad_qs(-0.5), ["query_dequant_scale", ">= 0", "-0.5"]),
    ("qs-nan", bad_qs(np.nan, b=0, h=0), ["query_dequant_scale", "nan"]),
    ("qs-inf-last-head", bad_qs(np.inf, b=1, h=7), ["query_dequant_scale", "inf"]),
    ("ks-nan-last-visible", bad_ks(np.nan, 0, lambda n: n - 1), ["key_dequant_scale", "nan", "of batch 0"]),
    ("ks-negative-mid", bad_ks(-1e-3, 1, lambda n: n // 2), ["key_dequant_scale", "of batch 1"]),
    ("ks-batch-start", bad_ks(np.nan, 1, lambda n: 0), ["key_dequant_scale", "nan", "(key 0 of batch 1)"]),
    ("ks-two-batches", both(bad_ks(-np.inf, 1, lambda n: 0), bad_ks(np.nan, 0, lambda n: n - 1)),
     ["key_dequant_scale", "nan", "of batch 0"]),
    ("w-times-qs", overflow(), ["weights * query_dequant_scale", "-120000"]),
    ("qs-before-ks", both(bad_ks(np.nan, 0, lambda n: 0), bad_qs(-2.0, b=1)), ["query_dequant_scale", "-2"]),
    ("ks-before-w-times-qs", both(overflow(), bad_ks(-0.25, 1, lambda n: n - 1)), ["key_dequant_scale", "-0.25"]),
]
LAYOUTS = [("BSND", "PA_BSND"), ("TND", "BSND"), ("BSND", "TND")]


def run_both_ways(args, mode, shape, soc="Ascend910B2"):
    """The host-checked run's exception, then the kernel-checked run's, and the outputs."""
    with pytest.raises(ValueError) as host:
        core.run_emu(**args, sparse_mode=mode, return_value=True, soc=soc)
    lead = args["query"].shape[:-2]
    out_idx = np.full(lead + (1, shape.k), 12345, dtype=np.int32)
    out_val = np.full(lead + (1, shape.k), 7.5, dtype=np.float32)
    with pytest.raises(ValueError) as kernel:
        core.run_emu(**args, sparse_mode=mode, return_value=True, sparse_indices=out_idx, sparse_values=out_val,
                     host_data_checks=False, order="both", soc=soc)
    return host.value, kernel.value, out_idx, out_val


@pytest.mark.parametrize("mode", (0, 3))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("case", SCALE_CASES, ids=lambda c: c[0])
def test_kernel_scale_check_raises_the_hosts_error_and_writes_nothing(case, shape, mode):
    name, mutate, words = case
    args = make(shape, "BSND", "PA_BSND", weights_dtype="float16", scale_dtype="float16", seed=11)
    mutate(args, mode)
    host, kernel, out_idx, out_val = run_both_ways(args, mode, shape)
    assert str(kernel) == str(host)
    for w in words:
        assert w in str(kernel), (w, str(kernel))
    assert (out_idx == 12345).all() and (out_val == 7.5).all()


@pytest.mark.parametrize("layouts", LAYOUTS, ids="-".join)
@pytest.mark.parametrize("case", [c for c in SCALE_CASES if c[0] in ("qs-negative", "ks-negative-mid", "w-times-qs")],
                         ids=lambda c: c[0])
def test_kernel_scale_check_names_the_element_in_every_layout(case, layouts):
    """On the 910B4 preset (fewer cores: other shares of the key scales)."""
    name, mutate, words = case
    shape = SHAPES[1]
    args = make(shape, *layouts, weights_dtype="float16", scale_dtype="float16", seed=12)
    mutate(args, 3)
    host, kernel, out_idx, out_val = run_both_ways(args, 3, shape, soc="Ascend910B4")
    assert str(kernel) == str(host)
    assert (out_idx == 12345).all() and (out_val == 7.5).all()


def test_kernel_key_scale_check_with_the_split_scale_cache():
    """key_dequant_scale [num_blocks, block_size, 1, 1] (indexer_k_quant_and_cache's): the message
    indexes it with its trailing 0."""
    shape = SHAPES[0]
    args = make(shape, "BSND", "PA_BSND", weights_dtype="float16", scale_dtype="float16", seed=13,
                ks_trailing_one=True)
    bad_ks(np.nan, 0, lambda n: n - 7)(args, 3)
    host, kernel, out_idx, out_val = run_both_ways(args, 3, shape)
    assert str(kernel) == str(host) and ", 0, 0]" in str(kernel)
    assert (out_idx == 12345).all()


def test_scales_the_kernel_must_not_inspect_pass():
    """Only what the contract checks is checked: NaN query scales and overflowing products in the
    padding rows past every batch, NaN key scales past act_s2, in blocks no batch uses and past
    the causal limit, -0 and the largest float16 as scales: the kernel-checked run succeeds and
    equals the host-checked one."""
    shape = Shape((2, 1), (3000, 700), 64, D, 256, block_size=128, name="decode-split")
    args = make(shape, "BSND", "PA_BSND", weights_dtype="float16", scale_dtype="float16", seed=14)
    set_at(args, "query_dequant_scale", (1, 1, 5), np.nan)  # batch 1 has one row: row 1 is padding
    set_at(args, "weights", (1, 1, 6), 65504.0)
    set_at(args, "query_dequant_scale", (1, 1, 6), 4.0)
    ks = args["key_dequant_scale"].copy()
    bs, table = args["key"].shape[1], args["block_table"]
    used = {int(i) for b, s2 in enumerate(shape.s2) for i in table[b, :(s2 + bs - 1) // bs]}
    for blk in set(range(ks.shape[0])) - used:
        ks[blk] = np.nan  # blocks no batch uses
    ks[int(table[1, 700 // bs]), 700 % bs:] = -np.inf  # batch 1's last block past act_s2
    ks[int(table[0, 0]), 0] = -0.0
    ks[int(table[0, 1]), 3] = 65504.0
    args["key_dequant_scale"] = ks
    set_at(args, "query_dequant_scale", (0, 0, 9), -0.0)
    want = core.run_emu(**args, sparse_mode=3, return_value=True)
    got = core.run_emu(**args, sparse_mode=3, return_value=True, host_data_checks=False, order="both")
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    # prefill, several rows per batch: the scales of the last blocks past act_s2
    pre = Shape((6, 3), (90, 45), 8, D, 32, block_size=16, name="prefill")
    args = make(pre, "BSND", "PA_BSND", weights_dtype="float16", scale_dtype="float16", seed=15)
    for b, s2 in enumerate(pre.s2):
        for j in range(s2, (s2 + 15) // 16 * 16):
            set_at(args, "key_dequant_scale", key_scale_index(args, b, j), np.nan)
    want = core.run_emu(**args, sparse_mode=3, return_value=True)
    got = core.run_emu(**args, sparse_mode=3, return_value=True, host_data_checks=False)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("shape", [
    Shape((1, 1), (26000, 9000), 8, D, 64, block_size=16, name="staged-block-table"),  # > 16 entries a piece
    Shape((1, 1), (130000, 125000), 1, D, 16, block_size=1024, name="several-rounds"),  # > 4096 keys an AIV
], ids=str)
def test_kernel_key_scale_check_with_large_shares(shape):
    """Key-scale shares past one block-table line and past one round's buffer: a bad scale at the
    last visible key is found, the first one (batch order) is raised, outputs untouched."""
    args = make(shape, "BSND", "PA_BSND", weights_dtype="float16", scale_dtype="float16", seed=16)
    bad_ks(np.nan, 1, lambda n: n - 1)(args, 3)
    host, kernel, out_idx, out_val = run_both_ways(args, 3, shape)
    assert str(kernel) == str(host) and "of batch 1" in str(kernel)
    bad_ks(-1.0, 0, lambda n: n - 2)(args, 3)
    host, kernel, out_idx, out_val = run_both_ways(args, 3, shape)
    assert str(kernel) == str(host) and "of batch 0" in str(kernel)
    assert (out_idx == 12345).all() and (out_val == 7.5).all()
