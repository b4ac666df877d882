"""The split merge of the AscendC kernel (kernel/lightning_indexer_merge.h) through the emulator:
decode launches split each item's keys over the AICs, and after a SyncAll the AIVs merge the
rows' partial top-k lists. Every case checks that the launch is split and compares with the
float64 reference: the prefix pass that holds (random keys), the one that does not (the best keys
all in the last splits: whole lists are merged), exact ties across splits, causal rows that skip
the splits past their limit, and K = 8192 (a list longer than a MrgSort input comes in pieces).
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_ops.common.loader import load_native

from li_cases import Shape, assert_topk, make, reference_rows

core = load_native("ascend_ops.lightning_indexer", "core")
if not core.HAS_EMU:
    pytest.skip("the emulator build is off (AOP_WITH_EMU): no emu backend to test", allow_module_level=True)

D = 128
SOC = "Ascend910B2"


def run_split(args, mode, dtype="float16", exact=False, k=None):
    """Runs the emu kernel on a launch that must be split; checks against the reference."""
    dt = "bfloat16" if dtype == "bfloat16" else ""
    tiling = core.kernel_tiling(**args, sparse_mode=mode, return_value=True, soc=SOC, dtype=dt)
    assert tiling["splits"] > 1, tiling
    idx, val, report = core.run_emu(**args, sparse_mode=mode, return_value=True, order="in_order", soc=SOC, dtype=dt)
    assert_topk(idx, val, reference_rows(args, dtype, mode), k or args["sparse_count"], exact=exact)
    assert report["max_ub_high_water"] <= report["ub_bytes"]
    return tiling


def test_random_keys_prefix_holds():
    args = make(Shape((1, 1), (8192, 6000), 8, D, 2048, block_size=128), "BSND", "PA_BSND", "float16", seed=1)
    run_split(args, 3)


def test_best_keys_in_the_last_splits():
    """Scores rise with the key index (levels of 128 equal keys): the top-k are the last keys, so
    the prefixes of the lists do not hold it and the whole lists are merged; ties exact."""
    shape = Shape((1,), (8192,), 8, D, 2048, block_size=128)
    args = make(shape, "BSND", "BSND", "float16", seed=2)
    rng = np.random.default_rng(2)
    base = np.abs(rng.standard_normal(D)).astype(np.float32)
    levels = np.arange(args["key"].shape[1]) // 128
    args["key"] = (base[None, None, :] * (1 + 0.02 * levels)[None, :, None]).astype(np.float16)[:, :, None, :]
    args["query"] = np.abs(args["query"])
    args["weights"] = np.abs(args["weights"])
    run_split(args, 0, exact=True)


@pytest.mark.parametrize("mode", (0, 3))
def test_ties_across_splits_go_to_the_smaller_index(mode):
    args = make(Shape((1, 1), (8192, 5000), 8, D, 1000, block_size=128), "BSND", "PA_BSND", "bfloat16",
                key_pool=4)
    run_split(args, mode, dtype="bfloat16", exact=True)


def test_causal_rows_skip_splits_past_their_limit():
    """S1 = 2048 over S2 = 3072, N1 = 1: items of 256 rows, each item's keys in three splits
    (of the keys its last row sees); earlier rows of an item see none of its last split's keys."""
    args = make(Shape((2048,), (3072,), 1, D, 32, block_size=128, extra_q=0), "BSND", "PA_BSND", "float16", seed=4)
    assert run_split(args, 3)["splits"] == 3


def test_k8192_lists_in_pieces():
    """K = 8192 with two splits of 4096 keys: a list is longer than one MrgSort input of the merge."""
    args = make(Shape((1,) * 12, (8192,) * 11 + (7000,), 8, D, 8192, block_size=128), "BSND", "PA_BSND",
                "bfloat16", seed=5)
    tiling = run_split(args, 3, dtype="bfloat16")
    assert tiling["splits"] == 2 and tiling["k_pad"] == 8192
