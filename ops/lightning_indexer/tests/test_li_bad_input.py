"""Every error of the spec through the NumPy front door: the documented exception and a
message naming the op, the argument and the expectation."""
import numpy as np
import pytest

from ascend_ops.lightning_indexer import lightning_indexer

from li_cases import Shape, make

SHAPE = Shape((3, 2), (20, 9), 4, 16, 8, block_size=4)


def base(layout_query="BSND", layout_key="PA_BSND"):
    return make(SHAPE, layout_query, layout_key, "float16", seed=3)


def setting(name, fn):
    def mutate(args):
        args[name] = fn(args[name]) if callable(fn) else fn
        return args
    return mutate


def dropping(name):
    def mutate(args):
        args[name] = None
        return args
    return mutate


def both(*mutations):
    def mutate(args):
        for m in mutations:
            args = m(args)
        return args
    return mutate


def compressed(ratio, residual, dtype=np.int32):
    """cmp_ratio and cmp_residual_k (a list becomes a [B] array of dtype)."""
    def mutate(args):
        args["cmp_ratio"] = ratio
        args["cmp_residual_k"] = np.array(residual, dtype) if isinstance(residual, list) else residual
        return args
    return mutate


# (id, layouts, mutation of the keyword arguments, exception, words in the message)
CASES = [
    # attributes
    ("layout_query-unknown", ("BSND", "PA_BSND"), setting("layout_query", "BNSD"), ValueError,
     ["layout_query", "'BSND' or 'TND'", "BNSD"]),
    ("layout_query-PA", ("BSND", "PA_BSND"), setting("layout_query", "PA_BSND"), ValueError, ["layout_query"]),
    ("layout_key-unknown", ("BSND", "PA_BSND"), setting("layout_key", "PA_BNSD"), ValueError,
     ["layout_key", "'PA_BSND', 'BSND' or 'TND'"]),
    ("sparse_mode-1", ("BSND", "PA_BSND"), setting("sparse_mode", 1), ValueError, ["sparse_mode", "0", "3", "1"]),
    ("sparse_mode-neg", ("BSND", "PA_BSND"), setting("sparse_mode", -3), ValueError, ["sparse_mode"]),
    ("sparse_count-0", ("BSND", "PA_BSND"), setting("sparse_count", 0), ValueError, ["sparse_count", "[1, 8192]"]),
    ("sparse_count-8193", ("BSND", "PA_BSND"), setting("sparse_count", 8193), ValueError, ["sparse_count", "8193"]),
    # dtypes
    ("query-dtype", ("BSND", "PA_BSND"), setting("query", lambda a: a.astype(np.float64)), TypeError,
     ["query", "float16, bfloat16 or float32", "float64"]),
    ("key-dtype", ("BSND", "PA_BSND"), setting("key", lambda a: a.astype(np.float32)), TypeError,
     ["key", "float16", "float32"]),
    ("block_table-byte-order", ("BSND", "PA_BSND"), setting("block_table", lambda a: a.astype(">i4")), TypeError,
     ["block_table", "byte order"]),
    ("weights-dtype", ("BSND", "PA_BSND"), setting("weights", lambda a: a.astype(np.int32)), TypeError,
     ["weights", "float32", "int32"]),
    ("block_table-dtype", ("BSND", "PA_BSND"), setting("block_table", lambda a: a.astype(np.float32)), TypeError,
     ["block_table", "int32 or int64"]),
    ("lengths-dtype", ("BSND", "PA_BSND"), setting("actual_seq_lengths_key", lambda a: a.astype(np.int16)),
     TypeError, ["actual_seq_lengths_key", "int32 or int64"]),
    # ranks and shapes
    ("query-rank", ("BSND", "PA_BSND"), setting("query", lambda a: a[0]), ValueError,
     ["query", "BSND [B, S1, N1, D]"]),
    ("query-rank-tnd", ("TND", "PA_BSND"), setting("query", lambda a: a[None]), ValueError,
     ["query", "TND [T1, N1, D]"]),
    ("key-rank", ("BSND", "PA_BSND"), setting("key", lambda a: a[:, :, 0]), ValueError,
     ["key", "PA_BSND [num_blocks, block_size, N2, D]"]),
    ("key-rank-tnd", ("BSND", "TND"), setting("key", lambda a: a[None]), ValueError, ["key", "TND [T2, N2, D]"]),
    ("key-D", ("BSND", "PA_BSND"), setting("key", lambda a: np.ascontiguousarray(a[..., :8])), ValueError,
     ["key", "D (from query) = 16"]),
    ("key-N2-not-dividing", ("BSND", "BSND"), setting("key", lambda a: np.concatenate([a, a, a], axis=2)),
     ValueError, ["key", "N2 >= 1 dividing N1 = 4"]),
    ("key-batch", ("BSND", "BSND"), setting("key", lambda a: a[:1]), ValueError, ["key", "B (from query) = 2"]),
    ("weights-S1", ("BSND", "PA_BSND"), setting("weights", lambda a: np.ascontiguousarray(a[:, :2])), ValueError,
     ["weights", "S1 (from query)"]),
    ("weights-N1", ("TND", "PA_BSND"), setting("weights", lambda a: np.ascontiguousarray(a[:, :3])), ValueError,
     ["weights", "N1 (from query) = 4"]),
    ("weights-rank", ("TND", "PA_BSND"), setting("weights", lambda a: a[None]), ValueError, ["weights", "[T1, N1]"]),
    ("block_table-batch", ("BSND", "PA_BSND"), setting("block_table", lambda a: a[:1]), ValueError,
     ["block_table", "[B, max_blocks]", "B = 2"]),
    ("block_table-rank", ("BSND", "PA_BSND"), setting("block_table", lambda a: a.reshape(-1)), ValueError,
     ["block_table", "[B, max_blocks]"]),
    ("lengths_q-batch", ("BSND", "PA_BSND"), setting("actual_seq_lengths_query", lambda a: a[:1]), ValueError,
     ["actual_seq_lengths_query", "B = 2"]),
    ("lengths_k-batch-tnd", ("TND", "TND"), setting("actual_seq_lengths_key", lambda a: np.append(a, a[-1])),
     ValueError, ["actual_seq_lengths_key", "B = 2"]),
    # required and forbidden arguments
    ("block_table-missing", ("BSND", "PA_BSND"), dropping("block_table"), ValueError,
     ["block_table is required", "PA_BSND"]),
    ("lengths_k-missing-pa", ("BSND", "PA_BSND"), dropping("actual_seq_lengths_key"), ValueError,
     ["actual_seq_lengths_key is required"]),
    ("lengths_k-missing-tnd", ("BSND", "TND"), dropping("actual_seq_lengths_key"), ValueError,
     ["actual_seq_lengths_key is required", "cumulative"]),
    ("lengths_q-missing-tnd", ("TND", "BSND"), dropping("actual_seq_lengths_query"), ValueError,
     ["actual_seq_lengths_query is required", "cumulative"]),
    ("block_table-without-PA", ("BSND", "BSND"), setting("block_table", np.zeros((2, 3), np.int32)), ValueError,
     ["block_table is only for layout_key 'PA_BSND'"]),
    # layouts in memory
    ("query-not-contiguous", ("BSND", "PA_BSND"), setting("query", lambda a: np.asfortranarray(a)), ValueError,
     ["query", "contiguous"]),
    ("key-not-contiguous", ("BSND", "BSND"), setting("key", lambda a: np.concatenate([a, a], axis=1)[:, ::2]),
     ValueError, ["key", "contiguous"]),
    # lengths beyond the tensors or the block table
    ("lengths_k-beyond-block-table", ("BSND", "PA_BSND"),
     setting("actual_seq_lengths_key", lambda a: np.where(np.arange(2) == 1, 10**4, a).astype(a.dtype)),
     ValueError, ["actual_seq_lengths_key[1] = 10000", "max_blocks * block_size"]),
    ("lengths_k-beyond-S2", ("BSND", "BSND"),
     setting("actual_seq_lengths_key", lambda a: np.where(np.arange(2) == 0, 24, a).astype(a.dtype)),
     ValueError, ["actual_seq_lengths_key[0] = 24", "S2 (23)"]),
    ("lengths_k-beyond-T2", ("BSND", "TND"), setting("actual_seq_lengths_key", lambda a: (a + 5).astype(a.dtype)),
     ValueError, ["actual_seq_lengths_key[1]", "T2"]),
    ("lengths_k-decreasing", ("BSND", "TND"), setting("actual_seq_lengths_key", lambda a: a[::-1].copy()),
     ValueError, ["actual_seq_lengths_key[1]", "never decrease"]),
    ("lengths_k-negative", ("BSND", "PA_BSND"), setting("actual_seq_lengths_key", lambda a: -a), ValueError,
     ["actual_seq_lengths_key[0] = -20", "negative"]),
    ("lengths_q-beyond-S1", ("BSND", "PA_BSND"), setting("actual_seq_lengths_query", lambda a: (a + 2).astype(a.dtype)),
     ValueError, ["actual_seq_lengths_query[0] = 5", "S1 (4)"]),
    ("lengths_q-beyond-T1", ("TND", "PA_BSND"), setting("actual_seq_lengths_query", lambda a: (a + 2).astype(a.dtype)),
     ValueError, ["actual_seq_lengths_query[1] = 7", "T1 (6)"]),
    # block ids
    ("block-id-out-of-range", ("BSND", "PA_BSND"), setting("block_table", lambda a: np.where(a == a[1, 0], 10, a)),
     IndexError, ["block_table[1][0] = 10", "key has 10 blocks"]),
    ("block-id-negative", ("BSND", "PA_BSND"), setting("block_table", lambda a: np.where(a == a[0, 4], -1, a)),
     IndexError, ["block_table[0][4] = -1"]),
    # compressed keys: cmp_ratio and cmp_residual_k
    ("cmp_ratio-0", ("BSND", "PA_BSND"), setting("cmp_ratio", 0), ValueError, ["cmp_ratio", "[1, 128]", "0"]),
    ("cmp_ratio-129", ("BSND", "PA_BSND"), both(setting("cmp_ratio", 129), compressed(129, [0, 0])), ValueError,
     ["cmp_ratio", "[1, 128]", "129"]),
    ("cmp_residual_k-missing", ("BSND", "PA_BSND"), setting("cmp_ratio", 4), ValueError,
     ["cmp_residual_k is required", "cmp_ratio 4", "sparse_mode 3"]),
    ("cmp_residual_k-with-ratio-1", ("BSND", "PA_BSND"), compressed(1, [0, 0]), ValueError,
     ["cmp_residual_k is only for cmp_ratio > 1"]),
    ("cmp_residual_k-dtype", ("BSND", "PA_BSND"), compressed(4, np.array([1, 2], np.float32)), TypeError,
     ["cmp_residual_k", "int32 or int64"]),
    ("cmp_residual_k-batch", ("BSND", "PA_BSND"), compressed(4, [1, 2, 3]), ValueError,
     ["cmp_residual_k", "[B]", "B = 2"]),
    ("cmp_residual_k-rank", ("BSND", "PA_BSND"), compressed(4, np.array([[1, 2]], np.int32)), ValueError,
     ["cmp_residual_k", "[B]"]),
    ("cmp_residual_k-not-contiguous", ("BSND", "PA_BSND"), compressed(4, np.array([1, 9, 2, 9], np.int32)[::2]),
     ValueError, ["cmp_residual_k", "contiguous"]),
    ("cmp_residual_k-equal-to-ratio", ("BSND", "PA_BSND"), compressed(4, [3, 4]), ValueError,
     ["cmp_residual_k[1] = 4", "[0, cmp_ratio = 4)"]),
    ("cmp_residual_k-negative", ("TND", "TND"), compressed(128, [-1, 0], np.int64), ValueError,
     ["cmp_residual_k[0] = -1", "[0, cmp_ratio = 128)"]),
    ("cmp_residual_k-checked-under-mode-0", ("BSND", "BSND"), both(setting("sparse_mode", 0), compressed(2, [0, 2])),
     ValueError, ["cmp_residual_k[1] = 2"]),
]


@pytest.mark.parametrize("case_id,layouts,mutate,exc,words", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises(case_id, layouts, mutate, exc, words):
    args = mutate(base(*layouts))
    with pytest.raises(exc) as info:
        lightning_indexer(**args)
    message = str(info.value)
    assert message.startswith("lightning_indexer:"), message
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"


def test_the_base_case_is_good():
    for layouts in {c[1] for c in CASES}:
        lightning_indexer(**base(*layouts))


def test_residual_is_optional_under_sparse_mode_0():
    """sparse_mode 0 ignores cmp_ratio: the residuals are optional there (checked when given)."""
    args = base()
    want, _ = lightning_indexer(**args, sparse_mode=0)
    got, _ = lightning_indexer(**args, sparse_mode=0, cmp_ratio=4)
    np.testing.assert_array_equal(got, want)


def test_unused_block_table_entries_are_not_checked():
    """Entries past a batch's last used block may hold anything (li_cases fills them with 10**6)."""
    args = base()
    assert (args["block_table"] == 10**6).any()
    lightning_indexer(**args)


def test_unknown_backend_and_foreign_type():
    with pytest.raises(ValueError, match="backend"):
        lightning_indexer(**base(), backend="emu")
    args = base()
    args["query"] = args["query"].tolist()
    with pytest.raises(TypeError, match="query should be"):
        lightning_indexer(**args)
