"""Golden tests of the cpu backend on NumPy arrays against the float64 reference, within the
contract's tolerance (sfa_cases.assert_matches)."""
import numpy as np
import pytest

from ascend_ops.sparse_flash_attention import sparse_flash_attention

from sfa_cases import DTYPES, KV_LAYOUTS, MODES, Q_LAYOUTS, SHAPES, Shape, assert_matches, make

LAYOUTS = [(q, kv) for q in Q_LAYOUTS for kv in KV_LAYOUTS if kv in ("PA_BSND", q)]


def run(args, **kwargs):
    return sparse_flash_attention(**args, **kwargs)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layouts", LAYOUTS, ids="-".join)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_matches_reference(shape, dtype, layouts, mode):
    length_dtype = np.int64 if (len(shape.act_q) + mode) % 2 else np.int32
    args = make(shape, *layouts, dtype, seed=len(shape.act_kv) + mode, length_dtype=length_dtype)
    out, m, l = run(args, sparse_mode=mode, return_softmax_lse=True)
    assert out.dtype == args["query"].dtype and m.dtype == np.float32 and l.dtype == np.float32
    assert_matches((out, m, l), args, dtype, mode)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_without_lse_the_output_is_the_same(dtype):
    args = make(SHAPES[0], "BSND", "PA_BSND", dtype)
    out, m, l = run(args)
    assert m is None and l is None
    np.testing.assert_array_equal(out, run(args, return_softmax_lse=True)[0])


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_value_a_separate_copy_gives_the_same_result(dtype):
    args = make(SHAPES[1], "TND", "PA_BSND", dtype, value_is_key=False)
    assert args["value"] is not args["key"]
    out = run(args, return_softmax_lse=True)
    assert_matches(out, args, dtype, 3)
    args["value"] = args["key"]
    np.testing.assert_array_equal(out[0], run(args)[0])


def test_a_different_value_is_read():
    """value is read as given (the formula's V), not taken from key."""
    args = make(SHAPES[0], "BSND", "PA_BSND", "float32", value_is_key=False)
    args["value"] = (args["value"] * 2 + 1).astype(np.float32)
    assert_matches(run(args, return_softmax_lse=True), args, "float32", 3)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_paged_caches_as_views_of_one_allocation(dtype):
    """key / key_rope with a block stride twice the block (one [num_blocks, 2, ...] tensor)."""
    args = make(SHAPES[1], "BSND", "PA_BSND", dtype, shared_cache=True)
    assert not args["key"].flags.c_contiguous
    assert_matches(run(args, return_softmax_lse=True), args, dtype, 3)


def test_duplicate_entries_count_with_multiplicity():
    args = make(SHAPES[0], "BSND", "PA_BSND", "float32", duplicates=True, tails=False)
    assert_matches(run(args, sparse_mode=0, return_softmax_lse=True), args, "float32", 0)


def test_worked_example_of_the_contract():
    """act_kv 10, act_q 3, sparse_mode 3, row 0: thr 8; idx [7, 2, 9, 5, -1, 3] -> P = [7, 2, 5];
    with sbs 4 and idx [1, 0, 2, -1] -> P = 4..7, 0..3. Keys are one-hot so out names P."""
    D = 16
    key = np.zeros((10, 1, D), np.float32)
    key[np.arange(10), 0, np.arange(10)] = 1.0
    value = key.copy()
    q = np.zeros((1, 3, 1, D), np.float32)
    rope_q, rope_k = np.zeros((1, 3, 1, 0), np.float32), np.zeros((1, 10, 1, 0), np.float32)
    kw = dict(query_rope=rope_q, key_rope=rope_k, layout_kv="BSND", sparse_mode=3,
              actual_seq_lengths_kv=np.array([10], np.int32), return_softmax_lse=True)
    idx = np.full((1, 3, 1, 6), -1, np.int32)
    idx[0, 0, 0] = [7, 2, 9, 5, -1, 3]
    out, m, l = sparse_flash_attention(q, key[None], value[None], idx, 1.0, **kw)
    want = np.zeros(D)
    want[[7, 2, 5]] = 1 / 3  # equal logits: uniform over P
    np.testing.assert_allclose(out[0, 0, 0], want, atol=1e-7)
    assert l[0, 0, 0, 0] == pytest.approx(3.0)
    idx4 = np.full((1, 3, 1, 4), -1, np.int32)
    idx4[0, 0, 0] = [1, 0, 2, -1]
    out, m, l = sparse_flash_attention(q, key[None], value[None], idx4, 1.0, sparse_block_size=4, **kw)
    want = np.zeros(D)
    want[:8] = 1 / 8
    np.testing.assert_allclose(out[0, 0, 0], want, atol=1e-7)
    # rows 1 and 2 have only -1: zeros, and softmax_max = softmax_sum = 0
    assert not out[0, 1:].any() and not m[0, 0, 1:].any() and not l[0, 0, 1:].any()


def test_empty_rows_and_rows_outside_every_batch_are_zero():
    """Causal rows that see nothing (act_q > act_kv), an act_kv of 0, and BSND rows >= act_q."""
    shape = Shape((4, 2), (2, 0), 4, 16, 4, 4, block_size=4, s1_pad=2)
    args = make(shape, "BSND", "PA_BSND", "bfloat16", seed=5)
    out, m, l = run(args, return_softmax_lse=True)
    assert not out[0, :2].astype(np.float32).any()  # rows 0, 1: thr = 2 - 4 + r + 1 <= 0
    assert not out[1].astype(np.float32).any()      # act_kv = 0
    assert not out[0, 4:].astype(np.float32).any() and not m[0, 0, 4:].any() and not l[0, 0, 4:].any()
    assert_matches((out, m, l), args, "bfloat16", 3)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_results_do_not_depend_on_the_thread_count(threads):
    """Work items split heads differently with the thread count; each head's sums are the same."""
    from ascend_ops.common import set_num_threads

    args = make(SHAPES[1], "BSND", "PA_BSND", "bfloat16", seed=2)
    set_num_threads(1)
    try:
        want = run(args, return_softmax_lse=True)
        set_num_threads(threads)
        got = run(args, return_softmax_lse=True)
    finally:
        set_num_threads(0)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(w, g)
