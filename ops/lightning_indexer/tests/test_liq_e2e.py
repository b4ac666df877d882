"""End to end, as a DeepSeek-V3.2 decode / prefill step on int8 keys: indexer_k_quant_and_cache
writes the keys into the split int8 cache ([num_blocks, block_size, 1, 128] codes and
[.., 1, 1] float16 scales), queries are quantised per token and head (amax / 127, float16
scales), and lightning_indexer_quant ranks the cache. The result is lightning_indexer's on the
dequantised tensors: both ops' outputs meet the float op's comparison rule against the float
reference of q̂ = qs * q8 and k̂ = ks * k8, and their values agree within twice its tolerance."""
import numpy as np
import pytest

from ascend_ops.indexer_k_quant_and_cache import indexer_k_quant_and_cache
from ascend_ops.lightning_indexer import lightning_indexer
from ascend_ops.lightning_indexer import reference as li_reference
from ascend_ops.lightning_indexer_quant import lightning_indexer_quant

from liq_cases import RTOL, assert_topk, reference_rows

D, BLOCK, N1 = 128, 16, 16


def quantise_query(q: np.ndarray):
    """Per token and head, symmetric: float16 scale amax / 127, codes rint(q / scale)."""
    amax = np.abs(q).max(axis=-1)
    scale = np.where(amax == 0, 1.0, amax / 127).astype(np.float16)
    codes = np.clip(np.rint(q / scale[..., None].astype(np.float32)), -127, 127).astype(np.int8)
    return codes, scale


@pytest.mark.parametrize("act_s1,mode", [((1, 1, 1), 3), ((5, 3, 9), 3), ((4, 2, 2), 0)], ids=str)
def test_cache_written_by_ikq_ranks_as_the_float_op(act_s1, mode):
    rng = np.random.default_rng(sum(act_s1) + mode)
    act_s2 = np.array([150, 33, 260], np.int32)
    B = len(act_s2)
    blocks = [(s + BLOCK - 1) // BLOCK for s in act_s2]
    num_blocks = sum(blocks) + 3
    table = np.full((B, max(blocks) + 1), -1, np.int32)
    ids = rng.permutation(num_blocks)
    at = 0
    for b, n in enumerate(blocks):
        table[b, :n] = ids[at:at + n]
        at += n
    # every batch's keys, written through slot_mapping into the split cache
    k = (rng.standard_normal((int(act_s2.sum()), D)) * rng.uniform(0.1, 4, (int(act_s2.sum()), 1))).astype(np.float32)
    slots = np.concatenate([table[b, np.arange(s) // BLOCK] * BLOCK + np.arange(s) % BLOCK
                            for b, s in enumerate(act_s2)]).astype(np.int64)
    k_cache = np.zeros((num_blocks, BLOCK, 1, D), np.int8)
    k_scale = np.full((num_blocks, BLOCK, 1, 1), np.nan, np.float16)  # blocks never written stay NaN
    indexer_k_quant_and_cache(k, k_cache, slots, k_scale_cache=k_scale, quant_block_size=D)

    S1 = max(act_s1)
    q = rng.standard_normal((B, S1, N1, D)).astype(np.float32)
    q8, qs = quantise_query(q)
    w = rng.standard_normal((B, S1, N1)).astype(np.float32)
    lq = np.array(act_s1, np.int32)
    K = 64
    common = dict(actual_seq_lengths_query=lq, actual_seq_lengths_key=act_s2, block_table=table,
                  layout_query="BSND", layout_key="PA_BSND", sparse_count=K, sparse_mode=mode)
    idx, val = lightning_indexer_quant(q8, k_cache, w, qs, k_scale, **common, return_value=True)
    args = dict(common, query=q8, key=k_cache, weights=w, query_dequant_scale=qs, key_dequant_scale=k_scale)
    assert_topk(idx, val, reference_rows(args, mode), K)

    # the float op on the dequantised tensors (exact in float32: 8-bit codes times float16 scales)
    used = np.unique(table[table >= 0])
    ks = np.where(np.isnan(k_scale), 0, k_scale).astype(np.float32)
    q_hat = q8.astype(np.float32) * qs.astype(np.float32)[..., None]
    k_hat = k_cache.astype(np.float32) * ks
    assert np.isfinite(k_hat[used]).all()
    f_idx, f_val = lightning_indexer(q_hat, k_hat, w, **common, return_value=True)
    float_rows = list(li_reference.rows(q_hat, k_hat, w, lq, act_s2, table, "BSND", "PA_BSND", mode))
    assert_topk(f_idx, f_val, float_rows, K)
    assert_topk(idx, val, float_rows, K)
    for row in float_rows:
        tol = 2 * RTOL * row.magnitude
        filled = f_idx[row.out] >= 0
        assert np.all(np.abs(val[row.out][filled] - f_val[row.out][filled]) <= tol)
