"""Halves (kernel/lightning_indexer_vector.h ProcessPair): when a group has one query row (decode),
the group takes two key splits of an item at once, the AIC alternates their blocks and each AIV
keeps the running top-k of its own split; both lists go to the split merge. Every case checks that
the launch uses halves and compares with the float64 reference: random keys (mode 0 and 3, lengths
that leave splits and pairs empty), exact ties across the two AIVs' splits, K larger than a split's
keys, and key limits that end inside a block of either AIV's split. (N1 <= 64 and D <= 128 keep
two rows of q in L0A: a group has one row only when the launch has one query row per batch.)
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


def run_halves(args, mode, dtype="float16", exact=False):
    """Runs the emu kernel on a launch that must use halves; checks against the reference."""
    dt = "bfloat16" if dtype == "bfloat16" else ""
    tiling = core.kernel_tiling(**args, sparse_mode=mode, return_value=True, soc=SOC, dtype=dt)
    assert tiling["halves"] == 1 and tiling["slots"] == 4, tiling
    assert tiling["rows_per_group"] == 1 and tiling["splits"] % 2 == 0, tiling
    idx, val, report = core.run_emu(**args, sparse_mode=mode, return_value=True, order="in_order", soc=SOC, dtype=dt)
    assert_topk(idx, val, reference_rows(args, dtype, mode), args["sparse_count"], exact=exact)
    assert report["max_ub_high_water"] <= report["ub_bytes"]
    return tiling


@pytest.mark.parametrize("mode", (0, 3))
def test_decode_random_keys(mode):
    """Eight decode rows, key lengths from one block to 6000 keys (not whole blocks): short batches
    leave their later splits, and whole pairs, empty; one batch has no query row."""
    shape = Shape((1, 1, 1, 0, 1, 1, 1, 1), (6000, 300, 5000, 4000, 513, 6000, 2047, 4600), 8, D, 512,
                  block_size=128, extra_q=0)
    args = make(shape, "BSND", "PA_BSND", "float16", seed=11)
    run_halves(args, mode)


def test_ties_across_the_two_halves_go_to_the_smaller_index():
    """Keys from a pool of 4: every score has thousands of equal copies in both AIVs' splits."""
    shape = Shape((1,) * 8, (5000, 4000, 6000, 4500, 3000, 5500, 4096, 4097), 8, D, 700, block_size=128,
                  extra_q=0)
    args = make(shape, "BSND", "PA_BSND", "bfloat16", key_pool=4, seed=12)
    run_halves(args, 3, dtype="bfloat16", exact=True)


def test_k_larger_than_a_split():
    """K = 2048 over splits of 512 - 1024 keys: each AIV's list holds fewer keys than K."""
    shape = Shape((1,) * 12, ((3000, 2500, 3072, 1000, 2900, 2048, 3071, 1600) * 2)[:12], 8, D, 2048, block_size=128,
                  extra_q=0)
    args = make(shape, "BSND", "BSND", "float16", seed=13)
    tiling = run_halves(args, 3)
    assert tiling["k_pad"] == 2048


def test_limits_inside_blocks_of_both_halves():
    """TND keys, sparse_mode 3: each row sees its batch's act_s2 keys (S1 = 1), a count
    that ends inside a block of AIV 0's split for some rows and of AIV 1's for others."""
    shape = Shape((1,) * 10, (1100, 2900, 1700, 3333, 2049, 1500, 777, 3100, 2600, 1999), 8, D, 256,
                  block_size=128, extra_q=0)
    args = make(shape, "BSND", "TND", "float16", seed=14)
    run_halves(args, 3)
