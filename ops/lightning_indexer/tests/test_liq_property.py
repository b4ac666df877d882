"""Properties of lightning_indexer_quant over random cases (hypothesis): any layout pair, sparse
mode, batch count (empty batches included), N2 | N1, odd D, block size, K below and above the
visible count, weight and scale dtypes, repeated keys (ties), zero scales -- always the golden
result (the spec's tolerance); scaling every qs by a power of two scales the values exactly and
keeps the indices; and the op equals lightning_indexer on the dequantised tensors where those
are exact in float32."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ascend_ops.lightning_indexer import lightning_indexer
from ascend_ops.lightning_indexer import reference as li_reference
from ascend_ops.lightning_indexer_quant import lightning_indexer_quant

from liq_cases import Shape, assert_topk, make, reference_rows


@st.composite
def cases(draw):
    batch = draw(st.integers(1, 3))
    n2 = draw(st.sampled_from((1, 1, 2)))
    shape = Shape(tuple(draw(st.lists(st.integers(0, 5), min_size=batch, max_size=batch))),
                  tuple(draw(st.lists(st.integers(0, 150), min_size=batch, max_size=batch))),
                  n2 * draw(st.sampled_from((1, 3, 4, 16, 17))), draw(st.sampled_from((1, 3, 8, 13, 64, 128))),
                  draw(st.integers(1, 160)), n2=n2, block_size=draw(st.sampled_from((1, 4, 16, 33))),
                  extra_q=draw(st.integers(0, 2)))
    layouts = (draw(st.sampled_from(("BSND", "TND"))), draw(st.sampled_from(("PA_BSND", "BSND", "TND"))))
    args = make(shape, *layouts, weights_dtype=draw(st.sampled_from(("float16", "float32"))),
                scale_dtype=draw(st.sampled_from(("float16", "float32"))), seed=draw(st.integers(0, 2**31)),
                key_pool=draw(st.sampled_from((None, None, 1, 3))))
    if draw(st.booleans()):  # some zero key scales: valid, those keys score 0
        ks = args["key_dequant_scale"]
        ks.reshape(-1)[:: draw(st.integers(2, 7))] = 0
    return args, draw(st.sampled_from((0, 3)))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(cases())
def test_random_cases_match_the_reference(case):
    args, mode = case
    idx, val = lightning_indexer_quant(**args, sparse_mode=mode, return_value=True)
    assert_topk(idx, val, reference_rows(args, mode), args["sparse_count"])


@settings(max_examples=20, deadline=None, derandomize=True)
@given(cases(), st.sampled_from((0.25, 2.0, 8.0)))
def test_power_of_two_query_scales_scale_the_values(case, factor):
    args, mode = case
    idx, val = lightning_indexer_quant(**args, sparse_mode=mode, return_value=True)
    scaled = dict(args, query_dequant_scale=args["query_dequant_scale"].astype(np.float32) * np.float32(factor))
    idx2, val2 = lightning_indexer_quant(**scaled, sparse_mode=mode, return_value=True)
    np.testing.assert_array_equal(idx2, idx)
    np.testing.assert_array_equal(val2, val * np.float32(factor))


@settings(max_examples=20, deadline=None, derandomize=True)
@given(cases())
def test_equals_the_float_op_on_dequantised_tensors(case):
    """float16 scales: q * qs and k * ks are exact in float32, so the float op sees the same
    numbers; both ops meet the float op's rule against the float reference of those tensors (its
    magnitude bounds this op's, so this op's tolerance is the tighter)."""
    args, mode = case
    a = dict(args, query_dequant_scale=args["query_dequant_scale"].astype(np.float16),
             key_dequant_scale=args["key_dequant_scale"].astype(np.float16))
    idx, val = lightning_indexer_quant(**a, sparse_mode=mode, return_value=True)
    rows = reference_rows(a, mode)
    assert_topk(idx, val, rows, a["sparse_count"])
    ks = a["key_dequant_scale"].astype(np.float32).reshape(a["key"].shape[:-1] + (1,))
    q_hat = a["query"].astype(np.float32) * a["query_dequant_scale"].astype(np.float32)[..., None]
    k_hat = a["key"].astype(np.float32) * ks
    w = a["weights"].astype(np.float32)
    geometry = dict(actual_seq_lengths_query=a["actual_seq_lengths_query"],
                    actual_seq_lengths_key=a["actual_seq_lengths_key"], block_table=a.get("block_table"),
                    layout_query=a["layout_query"], layout_key=a["layout_key"])
    f_idx, f_val = lightning_indexer(q_hat, k_hat, w, **geometry, sparse_count=a["sparse_count"], sparse_mode=mode,
                                     return_value=True)
    float_rows = list(li_reference.rows(q_hat, k_hat, w, **geometry, sparse_mode=mode))
    assert_topk(f_idx, f_val, float_rows, a["sparse_count"])
    assert_topk(idx, val, float_rows, a["sparse_count"])
