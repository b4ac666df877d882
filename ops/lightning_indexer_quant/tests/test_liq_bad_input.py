"""Every error of the spec through the NumPy front door: the documented exception, a message
starting "lightning_indexer_quant:" that names the argument and the expectation, and outputs
(given by the caller) left byte for byte untouched."""
import numpy as np
import pytest

from ascend_ops.lightning_indexer_quant import _core, lightning_indexer_quant

from liq_cases import Shape, make

SHAPE = Shape((3, 2), (20, 9), 4, 16, 8, block_size=4)


def base(layout_query="BSND", layout_key="PA_BSND"):
    return make(SHAPE, layout_query, layout_key, seed=3)


def setting(name, fn):
    def mutate(args):
        args[name] = fn(args[name]) if callable(fn) else fn
        return args
    return mutate


def poking(name, index, value):
    """Writes value at index of the (copied) array argument `name`."""
    def mutate(args):
        a = args[name].copy()
        a[index] = value
        args[name] = a
        return args
    return mutate


BSND_PA = ("BSND", "PA_BSND")
# (id, layouts, mutation of the keyword arguments, exception, words in the message)
CASES = [
    # attributes
    ("layout_query-unknown", BSND_PA, setting("layout_query", "BNSD"), ValueError, ["layout_query", "BNSD"]),
    ("layout_key-unknown", BSND_PA, setting("layout_key", "PA_BNSD"), ValueError, ["layout_key"]),
    ("sparse_mode-1", BSND_PA, setting("sparse_mode", 1), ValueError, ["sparse_mode", "1"]),
    ("sparse_count-0", BSND_PA, setting("sparse_count", 0), ValueError, ["sparse_count", "[1, 8192]"]),
    ("sparse_count-8193", BSND_PA, setting("sparse_count", 8193), ValueError, ["sparse_count", "8193"]),
    ("query_quant_mode-1", BSND_PA, setting("query_quant_mode", 1), ValueError, ["query_quant_mode", "0", "1"]),
    ("key_quant_mode-2", BSND_PA, setting("key_quant_mode", 2), ValueError, ["key_quant_mode", "2"]),
    # dtypes
    ("query-float16", BSND_PA, setting("query", lambda a: a.astype(np.float16)), TypeError,
     ["query", "int8", "float16"]),
    ("query-uint8", BSND_PA, setting("query", lambda a: a.view(np.uint8)), TypeError, ["query", "int8", "uint8"]),
    ("key-int32", BSND_PA, setting("key", lambda a: a.astype(np.int32)), TypeError, ["key", "int8", "int32"]),
    ("weights-int8", BSND_PA, setting("weights", lambda a: a.astype(np.int8)), TypeError,
     ["weights", "float16, bfloat16 or float32", "int8"]),
    ("qs-float64", BSND_PA, setting("query_dequant_scale", lambda a: a.astype(np.float64)), TypeError,
     ["query_dequant_scale", "float16 or float32", "float64"]),
    ("ks-int32", BSND_PA, setting("key_dequant_scale", lambda a: a.astype(np.int32)), TypeError,
     ["key_dequant_scale", "float16 or float32", "int32"]),
    ("lengths-float", BSND_PA, setting("actual_seq_lengths_key", lambda a: a.astype(np.float32)), TypeError,
     ["actual_seq_lengths_key", "int32 or int64"]),
    # shapes
    ("query-rank", BSND_PA, setting("query", lambda a: a[0]), ValueError, ["query", "rank 4"]),
    ("weights-N1", BSND_PA, setting("weights", lambda a: a[..., :3]), ValueError, ["weights", "N1"]),
    ("key-D", BSND_PA, setting("key", lambda a: np.ascontiguousarray(a[..., :8])), ValueError, ["key", "D (from query)"]),
    ("key-N2-not-dividing", BSND_PA, setting("key", lambda a: np.concatenate([a] * 3, axis=2)), ValueError,
     ["N2", "dividing"]),
    ("qs-shape", BSND_PA, setting("query_dequant_scale", lambda a: a[:, :, :2]), ValueError,
     ["query_dequant_scale", "[B, S1, N1]", "[2, 4, 4]", "[2, 4, 2]"]),
    ("qs-with-D", BSND_PA, setting("query_dequant_scale", lambda a: a[..., None]), ValueError,
     ["query_dequant_scale", "[2, 4, 4, 1]"]),
    ("ks-shape-PA", BSND_PA, setting("key_dequant_scale", lambda a: a[:, :2]), ValueError,
     ["key_dequant_scale", "[num_blocks, block_size, N2] or [.., N2, 1]"]),
    ("ks-shape-BSND", ("BSND", "BSND"), setting("key_dequant_scale", lambda a: a[..., None, None]), ValueError,
     ["key_dequant_scale", "[B, S2, N2]"]),
    ("ks-shape-TND", ("TND", "TND"), setting("key_dequant_scale", lambda a: a[:-1]), ValueError,
     ["key_dequant_scale", "[T2, N2]"]),
    ("qs-not-contiguous", BSND_PA, setting("query_dequant_scale", lambda a: np.repeat(a, 2, axis=2)[:, :, ::2]),
     ValueError, ["query_dequant_scale", "contiguous"]),
    ("key-not-contiguous", ("BSND", "BSND"), setting("key", lambda a: np.repeat(a, 2, axis=1)[:, ::2]), ValueError,
     ["key", "contiguous"]),
    ("block_table-missing", BSND_PA, setting("block_table", None), ValueError, ["block_table", "required"]),
    ("lengths_key-missing-TND", ("TND", "TND"), setting("actual_seq_lengths_key", None), ValueError,
     ["actual_seq_lengths_key", "required"]),
    # data
    ("lengths_key-beyond", ("BSND", "BSND"), poking("actual_seq_lengths_key", 1, 99), ValueError,
     ["actual_seq_lengths_key"]),
    ("lengths_query-negative", BSND_PA, poking("actual_seq_lengths_query", 0, -1), ValueError,
     ["actual_seq_lengths_query"]),
    ("block-id-out-of-range", BSND_PA, poking("block_table", (1, 0), 999), IndexError, ["block_table"]),
    ("qs-negative", BSND_PA, poking("query_dequant_scale", (1, 1, 2), -0.5), ValueError,
     ["query_dequant_scale", "finite and >= 0", "-0.5", "[1, 1, 2]"]),
    ("qs-nan", ("TND", "TND"), poking("query_dequant_scale", (2, 0), np.nan), ValueError,
     ["query_dequant_scale", "nan", "[2, 0]"]),
    ("qs-inf", BSND_PA, poking("query_dequant_scale", (0, 0, 0), np.inf), ValueError, ["query_dequant_scale", "inf"]),
    ("ks-negative-visible-BSND", ("BSND", "BSND"), poking("key_dequant_scale", (1, 8, 0), -1.0), ValueError,
     ["key_dequant_scale", "visible key", "[1, 8, 0]", "key 8 of batch 1"]),
    ("ks-nan-visible-TND", ("TND", "TND"), poking("key_dequant_scale", (20, 0), np.nan), ValueError,
     ["key_dequant_scale", "nan", "key 0 of batch 1"]),
]


def _pa_visible_scale(args):
    """PA_BSND: key 5 of batch 0 lies in block block_table[0][1], offset 1."""
    ks = args["key_dequant_scale"].copy()
    ks[args["block_table"][0][1], 1, 0] = -2.0
    args["key_dequant_scale"] = ks
    return args


CASES.append(("ks-negative-visible-PA", BSND_PA, _pa_visible_scale, ValueError,
              ["key_dequant_scale", "-2", "key 5 of batch 0"]))


def _outputs(args):
    """Caller-given outputs filled with a sentinel (shape from a good call's)."""
    idx, val = lightning_indexer_quant(**base(args["layout_query"], args["layout_key"]), return_value=True)
    return np.full(idx.shape, 0x5A5A5A5A, np.int32), np.full(val.shape, 7.25, np.float32)


@pytest.mark.parametrize("case_id,layouts,mutate,exc,words", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises_and_writes_nothing(case_id, layouts, mutate, exc, words):
    args = mutate(base(*layouts))
    with pytest.raises(exc) as info:
        lightning_indexer_quant(**args)
    message = str(info.value)
    assert message.startswith("lightning_indexer_quant:"), message
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"
    if "shape" in case_id or "rank" in case_id or "layout" in case_id or "sparse_count" in case_id \
            or "N2" in case_id or "-D" in case_id or "with-D" in case_id:
        return  # no well-shaped output exists for these
    out_idx, out_val = _outputs(dict(base(*layouts), layout_query=layouts[0], layout_key=layouts[1]))
    before_idx, before_val = out_idx.copy(), out_val.copy()
    with pytest.raises(exc):
        _core.run_cpu(**args, sparse_indices=out_idx, sparse_values=out_val, return_value=True)
    np.testing.assert_array_equal(out_idx, before_idx)
    np.testing.assert_array_equal(out_val.view(np.int32), before_val.view(np.int32))


def test_the_base_cases_are_good():
    for layouts in {c[1] for c in CASES}:
        lightning_indexer_quant(**base(*layouts))


def test_scales_of_keys_never_read_are_not_inspected():
    """Keys past act_s2, of unused blocks, or past every row's causal limit may have any scale."""
    args = base("BSND", "BSND")
    ks = args["key_dequant_scale"]
    ks[0, 20:] = np.nan   # batch 0: act_s2 20
    ks[1, 9:] = -1        # batch 1: act_s2 9
    lightning_indexer_quant(**args)
    args = base("BSND", "PA_BSND")
    used = set(args["block_table"][0][:5].tolist() + args["block_table"][1][:3].tolist())
    unused = [b for b in range(args["key"].shape[0]) if b not in used]
    args["key_dequant_scale"][unused] = np.nan
    lightning_indexer_quant(**args)
    args = base("BSND", "BSND")
    args["query_dequant_scale"][0, 3:] = np.nan  # rows past act_s1 = 3
    lightning_indexer_quant(**args)


def test_caller_outputs_are_filled():
    args = base()
    out_idx, out_val = _outputs(dict(args))
    _core.run_cpu(**args, sparse_indices=out_idx, sparse_values=out_val, return_value=True)
    idx, val = lightning_indexer_quant(**args, return_value=True)
    np.testing.assert_array_equal(out_idx, idx)
    np.testing.assert_array_equal(out_val, val)
