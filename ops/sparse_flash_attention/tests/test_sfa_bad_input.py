"""Every error of the contract through the NumPy front door: the documented exception and a
message naming the op, the argument, the expectation and the actual value."""
import numpy as np
import pytest

from ascend_ops.sparse_flash_attention import sparse_flash_attention

from sfa_cases import Shape, make

SHAPE = Shape((3, 2), (20, 9), 4, 16, 4, 8, block_size=4, s1_pad=1)


def base(layout_query="BSND", layout_kv="PA_BSND"):
    args = make(SHAPE, layout_query, layout_kv, "float16", seed=3, tails=False)
    args["value"] = args["key"]
    return args


def setting(name, fn):
    def mutate(args):
        args[name] = fn(args[name]) if callable(fn) else fn
        return args
    return mutate


def dropping(name):
    return setting(name, None)


def row_entry(row, entry, value):
    """sparse_indices with entry `entry` of flat row `row` replaced."""
    def fn(a):
        a = a.copy()
        a.reshape(-1, a.shape[-1])[row, entry] = value
        return a
    return setting("sparse_indices", fn)


PA = ("BSND", "PA_BSND")
CASES = [
    # attributes
    ("layout_query-unknown", PA, setting("layout_query", "BNSD"), ValueError, ["layout_query", "'BSND' or 'TND'", "BNSD"]),
    ("layout_query-PA", PA, setting("layout_query", "PA_BSND"), ValueError, ["layout_query", "PA_BSND"]),
    ("layout_kv-unknown", PA, setting("layout_kv", "PA_BNSD"), ValueError, ["layout_kv", "'PA_BSND', 'BSND' or 'TND'"]),
    ("layout_kv-BSND-with-TND-query", ("TND", "PA_BSND"), setting("layout_kv", "BSND"), ValueError,
     ["layout_kv 'BSND'", "layout_query is 'TND'"]),
    ("sparse_mode-1", PA, setting("sparse_mode", 1), ValueError, ["sparse_mode", "0", "3", "but is 1"]),
    ("attention_mode-0", PA, setting("attention_mode", 0), ValueError, ["attention_mode should be 2", "but is 0"]),
    ("pre_tokens", PA, setting("pre_tokens", 100), ValueError, ["pre_tokens", "9223372036854775807", "100"]),
    ("next_tokens", PA, setting("next_tokens", 0), ValueError, ["next_tokens", "default"]),
    ("sbs-0", PA, setting("sparse_block_size", 0), ValueError, ["sparse_block_size should be >= 1", "0"]),
    # dtypes
    ("query-dtype", PA, setting("query", lambda a: a.astype(np.float64)), TypeError,
     ["query", "float16, bfloat16 or float32", "float64"]),
    ("key-dtype", PA, setting("key", lambda a: a.astype(np.float32)), TypeError, ["key", "float16", "float32"]),
    ("value-dtype", PA, setting("value", lambda a: a.astype(np.float32)), TypeError, ["value", "float16", "float32"]),
    ("query_rope-dtype", PA, setting("query_rope", lambda a: a.astype(np.float32)), TypeError, ["query_rope", "float16"]),
    ("key_rope-dtype", PA, setting("key_rope", lambda a: a.astype(np.float32)), TypeError, ["key_rope", "float16"]),
    ("indices-dtype", PA, setting("sparse_indices", lambda a: a.astype(np.int64)), TypeError,
     ["sparse_indices", "int32", "int64"]),
    ("block_table-dtype", PA, setting("block_table", lambda a: a.astype(np.float32)), TypeError,
     ["block_table", "int32", "float32"]),
    ("lengths-dtype", PA, setting("actual_seq_lengths_kv", lambda a: a.astype(np.int16)), TypeError,
     ["actual_seq_lengths_kv", "int32", "int16"]),
    # ranks and shapes
    ("query-rank", PA, setting("query", lambda a: a[0]), ValueError, ["query", "BSND [B, S1, N1, D]"]),
    ("query-rank-tnd", ("TND", "PA_BSND"), setting("query", lambda a: a[None]), ValueError, ["query", "TND [T1, N1, D]"]),
    ("key-rank", PA, setting("key", lambda a: a[:, :, 0]), ValueError, ["key", "PA_BSND [num_blocks, block_size"]),
    ("key-D", PA, setting("key", lambda a: np.ascontiguousarray(a[..., :8])), ValueError, ["key", "D=16", "[11, 4, 1, 8]"]),
    ("key-N2", ("BSND", "BSND"), setting("key", lambda a: np.concatenate([a, a], axis=2)), ValueError, ["key", "N2=1"]),
    ("key-batch", ("BSND", "BSND"), setting("key", lambda a: a[:1]), ValueError, ["key", "B=2"]),
    ("value-shape", PA, setting("value", lambda a: np.ascontiguousarray(a[:-1])), ValueError, ["value", "num_blocks=11"]),
    ("query_rope-N1", PA, setting("query_rope", lambda a: np.ascontiguousarray(a[:, :, :3])), ValueError,
     ["query_rope", "N1=4"]),
    ("query_rope-rank", PA, setting("query_rope", lambda a: a[0]), ValueError, ["query_rope", "rank 4"]),
    ("key_rope-Dr", PA, setting("key_rope", lambda a: np.ascontiguousarray(a[..., :2])), ValueError, ["key_rope", "Dr=4"]),
    ("indices-S1", PA, setting("sparse_indices", lambda a: np.ascontiguousarray(a[:, :2])), ValueError,
     ["sparse_indices", "S1=4"]),
    ("indices-N2", PA, setting("sparse_indices", lambda a: np.concatenate([a, a], axis=2)), ValueError,
     ["sparse_indices", "N2=1"]),
    ("indices-K0", PA, setting("sparse_indices", lambda a: np.ascontiguousarray(a[..., :0])), ValueError,
     ["sparse_indices", "K >= 1"]),
    ("block_table-batch", PA, setting("block_table", lambda a: a[:1]), ValueError, ["block_table", "B=2"]),
    ("lengths_q-batch", PA, setting("actual_seq_lengths_query", lambda a: a[:1]), ValueError,
     ["actual_seq_lengths_query", "B=2"]),
    ("lengths_kv-one-element", PA, setting("actual_seq_lengths_kv", lambda a: a[:1]), ValueError,
     ["actual_seq_lengths_kv", "B=2", "[1]"]),
    # required and forbidden arguments
    ("block_table-missing", PA, dropping("block_table"), ValueError, ["block_table is required", "PA_BSND"]),
    ("lengths_kv-missing-pa", PA, dropping("actual_seq_lengths_kv"), ValueError, ["actual_seq_lengths_kv is required"]),
    ("lengths_kv-missing-tnd", ("TND", "TND"), dropping("actual_seq_lengths_kv"), ValueError,
     ["actual_seq_lengths_kv is required", "cumulative"]),
    ("lengths_q-missing-tnd", ("TND", "PA_BSND"), dropping("actual_seq_lengths_query"), ValueError,
     ["actual_seq_lengths_query is required", "cumulative"]),
    ("query_rope-missing", PA, dropping("query_rope"), ValueError, ["query_rope is required"]),
    ("key_rope-missing", PA, dropping("key_rope"), ValueError, ["key_rope is required"]),
    ("block_table-without-PA", ("BSND", "BSND"), setting("block_table", np.zeros((2, 3), np.int32)), ValueError,
     ["block_table is only for layout_kv 'PA_BSND'"]),
    # layouts in memory
    ("query-not-contiguous", PA, setting("query", lambda a: np.asfortranarray(a)), ValueError, ["query", "contiguous"]),
    ("indices-not-contiguous", PA, setting("sparse_indices", lambda a: np.asfortranarray(a)), ValueError,
     ["sparse_indices", "contiguous"]),
    ("key-rows-not-contiguous", PA, setting("key", lambda a: np.concatenate([a, a], axis=1)[:, ::2]), ValueError,
     ["key", "contiguous in its last three dimensions"]),
    ("key-bsnd-not-contiguous", ("BSND", "BSND"), setting("key", lambda a: np.concatenate([a, a], axis=1)[:, ::2]),
     ValueError, ["key", "should be contiguous"]),
    ("value-block-stride", PA, setting("value", lambda a: np.concatenate([a, a], axis=1)[:, :4]), ValueError,
     ["value", "block stride of key"]),
    # lengths beyond the tensors or the block table
    ("lengths_kv-beyond-block-table", PA,
     setting("actual_seq_lengths_kv", lambda a: np.where(np.arange(2) == 1, 10**4, a).astype(a.dtype)),
     ValueError, ["actual_seq_lengths_kv[1] = 10000", "max_blocks * block_size"]),
    ("lengths_kv-beyond-S2", ("BSND", "BSND"),
     setting("actual_seq_lengths_kv", lambda a: np.where(np.arange(2) == 0, 24, a).astype(a.dtype)),
     ValueError, ["actual_seq_lengths_kv[0] = 24", "S2 (23)"]),
    ("lengths_kv-decreasing", ("TND", "TND"), setting("actual_seq_lengths_kv", lambda a: a[::-1].copy()),
     ValueError, ["actual_seq_lengths_kv[1]", "never decrease"]),
    ("lengths_kv-negative", PA, setting("actual_seq_lengths_kv", lambda a: -a), ValueError,
     ["actual_seq_lengths_kv[0] = -20", "negative"]),
    ("lengths_q-beyond-S1", PA, setting("actual_seq_lengths_query", lambda a: (a + 2).astype(a.dtype)),
     ValueError, ["actual_seq_lengths_query[0] = 5", "S1 (4)"]),
    ("lengths_q-beyond-T1", ("TND", "PA_BSND"), setting("actual_seq_lengths_query", lambda a: (a + 2).astype(a.dtype)),
     ValueError, ["actual_seq_lengths_query[1] = 7", "T1 (5)"]),
    # block ids and indices
    ("block-id-out-of-range", PA, setting("block_table", lambda a: np.where(a == a[1, 0], 11, a)),
     IndexError, ["block_table[1][0] = 11", "key has 11 blocks"]),
    ("block-id-negative", PA, setting("block_table", lambda a: np.where(a == a[0, 4], -1, a)),
     IndexError, ["block_table[0][4] = -1"]),
    ("index-below-minus-one", PA, row_entry(2, 1, -2), IndexError,
     ["sparse_indices row 2", "entry 1 = -2", "should be >= -1"]),
]


@pytest.mark.parametrize("case_id,layouts,mutate,exc,words", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises(case_id, layouts, mutate, exc, words):
    args = mutate(base(*layouts))
    with pytest.raises(exc) as info:
        sparse_flash_attention(**args)
    message = str(info.value)
    assert message.startswith("sparse_flash_attention:"), message
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"


def test_the_base_cases_are_good():
    for layouts in {c[1] for c in CASES}:
        sparse_flash_attention(**base(*layouts))


def test_entries_never_read_are_not_checked():
    """Entries after a -1, beyond n, and block-table entries past a batch's blocks may hold anything."""
    args = base()
    assert (args["block_table"] == 10**6).any()
    idx = args["sparse_indices"].reshape(-1, SHAPE.k)
    idx[0, 0] = -1
    idx[0, 1:] = -7           # after the first -1
    idx[3, :] = -1            # row 3 of batch 0 is past act_q = 3: never read
    idx[3, 0] = -9
    sparse_flash_attention(**args)


def test_an_index_after_an_out_of_window_entry_is_still_checked():
    """Row 0 of batch 0 under sparse_mode 3 sees 20 - 3 + 1 = 18 positions: n = min(8, 18) = 8."""
    args = base()
    idx = args["sparse_indices"].reshape(-1, SHAPE.k)
    idx[0, :] = [19, 0, 1, -5, 2, 3, 4, 5]
    with pytest.raises(IndexError, match="entry 3 = -5"):
        sparse_flash_attention(**args)


def test_unknown_backend_and_foreign_type():
    with pytest.raises(ValueError, match="backend"):
        sparse_flash_attention(**base(), backend="npu")
    args = base()
    args["query"] = args["query"].tolist()
    with pytest.raises(TypeError, match="query should be"):
        sparse_flash_attention(**args)
