"""The CPU kernel through the NumPy front door against the golden reference (the spec's
tolerance 1e-5 * M), every layout pair, both sparse modes, float16 / bfloat16 / float32 weights,
float16 / float32 scales, -1 tails, ties and the [.., N2, 1] scale cache."""
import ml_dtypes
import numpy as np
import pytest

from ascend_ops.lightning_indexer_quant import lightning_indexer_quant, reference

from liq_cases import K_LAYOUTS, MODES, Q_LAYOUTS, SHAPES, Shape, assert_topk, make, reference_rows


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layout_key", K_LAYOUTS)
@pytest.mark.parametrize("layout_query", Q_LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_matches_reference(shape, layout_query, layout_key, mode):
    args = make(shape, layout_query, layout_key, seed=hash((str(shape), layout_query, layout_key)) % 1000)
    idx, val = lightning_indexer_quant(**args, sparse_mode=mode, return_value=True)
    assert idx.dtype == np.int32 and val.dtype == np.float32
    assert_topk(idx, val, reference_rows(args, mode), shape.k)


@pytest.mark.parametrize("weights_dtype,scale_dtype",
                         [("float16", "float16"), ("float32", "float16"), ("float16", "float32"),
                          (ml_dtypes.bfloat16, "float32")], ids=str)
def test_weight_and_scale_dtypes(weights_dtype, scale_dtype):
    shape = SHAPES[0]
    args = make(shape, "BSND", "PA_BSND", weights_dtype=weights_dtype, scale_dtype=scale_dtype, seed=5)
    idx, val = lightning_indexer_quant(**args, return_value=True)
    assert_topk(idx, val, reference_rows(args, 3), shape.k)


def test_scale_cache_with_trailing_one():
    """indexer_k_quant_and_cache's split scale cache [num_blocks, block_size, 1, 1] is taken as is."""
    shape = Shape((2, 1), (50, 33), 8, 128, 16)
    args = make(shape, "TND", "PA_BSND", scale_dtype="float16", ks_trailing_one=True, seed=2)
    assert args["key_dequant_scale"].ndim == 4
    idx, val = lightning_indexer_quant(**args, return_value=True)
    assert_topk(idx, val, reference_rows(args, 3), shape.k)
    flat = dict(args, key_dequant_scale=args["key_dequant_scale"][..., 0])
    idx2, val2 = lightning_indexer_quant(**flat, return_value=True)
    np.testing.assert_array_equal(idx2, idx)
    np.testing.assert_array_equal(val2, val)


def test_ties_go_to_the_smaller_index():
    """Keys drawn from a pool of 5 (equal keys and scales score equally): exact indices."""
    shape = Shape((3, 2), (300, 77), 16, 32, 40)
    for layout_key in K_LAYOUTS:
        args = make(shape, "BSND", layout_key, key_pool=5, seed=9)
        idx, val = lightning_indexer_quant(**args, sparse_mode=0, return_value=True)
        want_idx, _ = reference.lightning_indexer_quant(**{k: v for k, v in args.items()}, sparse_mode=0)
        np.testing.assert_array_equal(idx, want_idx)


def test_minus_one_tail_and_empty_rows():
    shape = Shape((4, 0), (3, 9), 4, 16, 8, extra_q=2)
    args = make(shape, "BSND", "BSND", seed=1)
    idx, val = lightning_indexer_quant(**args, sparse_mode=3, return_value=True)
    # batch 0: act_s1 4 > act_s2 3: row 0 sees 0 keys, row 3 sees 3; padding rows and batch 1: all -1
    assert (idx[0, 0] == -1).all() and np.isneginf(val[0, 0]).all()
    assert (idx[0, 3, 0, :3] >= 0).all() and (idx[0, 3, 0, 3:] == -1).all()
    assert (idx[1] == -1).all() and (idx[0, 4:] == -1).all()
    assert_topk(idx, val, reference_rows(args, 3), shape.k)


def test_values_are_none_unless_asked():
    args = make(SHAPES[1], "BSND", "PA_BSND")
    idx, val = lightning_indexer_quant(**args)
    assert val is None
    idx2, _ = lightning_indexer_quant(**args, return_value=True)
    np.testing.assert_array_equal(idx, idx2)


def test_zero_scales_and_negative_dots():
    """Zero scales score 0 (valid); all-negative dots give ReLU 0 everywhere: ties, smaller index first."""
    shape = Shape((2,), (40,), 4, 16, 10)
    args = make(shape, "BSND", "BSND", seed=4)
    args["key_dequant_scale"][0, :10] = 0
    idx, val = lightning_indexer_quant(**args, sparse_mode=0, return_value=True)
    assert_topk(idx, val, reference_rows(args, 0), shape.k)
    args["query"][:] = 1
    args["key"][:] = -1
    idx, val = lightning_indexer_quant(**args, sparse_mode=0, return_value=True)
    np.testing.assert_array_equal(idx[0, :2, 0], np.tile(np.arange(10, dtype=np.int32), (2, 1)))
    assert (val[0, :2] == 0).all()


def test_extreme_codes_are_exact():
    """int8 -128 / 127 everywhere at D = 128: |dot| = 2^21, exact in int32 (the VNNI bias trick
    included); weights of both signs."""
    shape = Shape((1, 1), (64, 64), 32, 128, 64, name="extreme")
    args = make(shape, "BSND", "BSND", seed=8)
    rng = np.random.default_rng(3)
    args["query"][:] = rng.choice(np.array([-128, 127], np.int8), args["query"].shape)
    args["key"][:] = rng.choice(np.array([-128, 127], np.int8), args["key"].shape)
    idx, val = lightning_indexer_quant(**args, sparse_mode=0, return_value=True)
    assert_topk(idx, val, reference_rows(args, 0), shape.k)


def test_large_sparse_count():
    shape = Shape((2,), (9000,), 4, 16, 8192, name="K8192")
    args = make(shape, "BSND", "BSND", seed=6)
    idx, val = lightning_indexer_quant(**args, sparse_mode=0, return_value=True)
    assert_topk(idx, val, reference_rows(args, 0), shape.k)


def test_strided_paged_key_is_read_where_it_lies():
    # The K half of a [num_blocks, 2, block_size, N2, D] cache (vLLM's kv[:, 0]): blocks lie
    # 2 * block_size * N2 * D apart; the result is that of the same keys packed.
    shape = SHAPES[0]
    args = make(shape, "BSND", "PA_BSND", seed=11)
    key = args["key"]
    pool = np.zeros((key.shape[0], 2) + key.shape[1:], dtype=key.dtype)
    pool[:, 0] = key
    pool[:, 1] = -key  # the other half: any read of it would change the scores
    strided = dict(args, key=pool[:, 0])
    assert not strided["key"].flags["C_CONTIGUOUS"]
    want = lightning_indexer_quant(**args, return_value=True)
    got = lightning_indexer_quant(**strided, return_value=True)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert_topk(got[0], got[1], reference_rows(args, 3), shape.k)
