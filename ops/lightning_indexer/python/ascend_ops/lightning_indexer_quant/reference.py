"""NumPy golden reference of lightning_indexer_quant, written from the specification alone.

Shares no code with the kernels. The dots are exact (int64), the scores float64. For batch b
with act_s1 query rows and act_s2 keys, key head g and its query heads h::

    dot[h, j]   = sum_d int(query[r, h, d]) * int(key(j)[g, d])
    score[r, j] = sum_h weights[r, h] * ReLU(qs[r, h] * ks(j)[g] * dot[h, j])
    visible(r, j) = j < act_s2 (sparse_mode 0) or j <= act_s2 - act_s1 + r (sparse_mode 3)
    sparse_indices[r, g, :] = visible j by descending score, ties to the smaller j, -1 tail
    sparse_values[r, g, :]  = their scores, -inf where the index is -1

key(j) and ks(j) are logical key j of the batch (through block_table for PA_BSND).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional, Tuple

import numpy as np

__all__ = ["lightning_indexer_quant", "Row", "npu_scores", "rows", "visible_keys"]


@dataclass
class Row:
    """One output row: where it goes, the visible keys' float64 scores (index j at position j)
    and the spec's magnitude M = max_j |ks(j)| * sum_h |weights * qs| * max(dot[h, j], 0)."""

    out: Tuple[int, ...]
    scores: np.ndarray
    magnitude: float


def _lengths(x: Optional[np.ndarray]) -> Optional[list]:
    return None if x is None else [int(v) for v in np.asarray(x).reshape(-1)]


def visible_keys(sparse_mode, act_s1, act_s2, r) -> int:
    """Keys [0, result) visible to row r of a batch."""
    if sparse_mode == 0:
        return act_s2
    return min(max(act_s2 - act_s1 + r + 1, 0), act_s2)


def npu_scores(dots, weights, query_dequant_scale, key_scales) -> np.ndarray:
    """The spec's "NPU numerics" of one row and key head, float32 [keys] (times 2^10, exactly):
    dots [heads, keys] exact int, weights / query_dequant_scale [heads], key_scales [keys]::

        a[h, j] = fp16(2^-10 * max(dot[h, j], 0))
        wq[h]   = fp16(fp16(weights[h]) * fp16(qs[h]))
        s[j]    = sum_h fp32(wq[h]) * fp32(a[h, j])     (float32, heads in order)
        score   = s * (fp32(ks(j)) * 2^10)
    """
    a = (np.maximum(np.asarray(dots, dtype=np.float64), 0) * 2.0 ** -10).astype(np.float16).astype(np.float32)
    w16 = np.asarray(weights).astype(np.float16).astype(np.float32)
    qs16 = np.asarray(query_dequant_scale).astype(np.float16).astype(np.float32)
    wq = (w16 * qs16).astype(np.float16).astype(np.float32)
    s = np.zeros(a.shape[1], dtype=np.float32)
    for h in range(a.shape[0]):
        s = (s + wq[h] * a[h]).astype(np.float32)
    ks = np.asarray(key_scales).astype(np.float16).astype(np.float32) * np.float32(1024.0)
    return (s * ks).astype(np.float32)


def rows(query, key, weights, query_dequant_scale, key_dequant_scale, actual_seq_lengths_query=None,
         actual_seq_lengths_key=None, block_table=None, layout_query="BSND", layout_key="PA_BSND",
         sparse_mode=3, numerics="exact") -> Iterator[Row]:
    """Every output row that belongs to a batch, with its visible scores: float64 (numerics
    "exact", the contract) or float32 ("npu": npu_scores, what the AscendC kernel computes)."""
    q = np.asarray(query).astype(np.int64)
    k = np.asarray(key).astype(np.int64)
    w = np.asarray(weights, dtype=np.float64)
    qs = np.asarray(query_dequant_scale, dtype=np.float64)
    ks = np.asarray(key_dequant_scale, dtype=np.float64)
    ks = ks.reshape(k.shape[:-1])  # PA_BSND [.., N2, 1] -> [.., N2]
    lq, lk = _lengths(actual_seq_lengths_query), _lengths(actual_seq_lengths_key)
    n1, n2 = q.shape[-2], k.shape[-2]
    group = n1 // n2
    if layout_query == "TND":
        q_spans = [((lq[b - 1] if b else 0), lq[b]) for b in range(len(lq))]
    else:
        q_spans = [(0, lq[b] if lq is not None else q.shape[1]) for b in range(q.shape[0])]
    for b, (begin, end) in enumerate(q_spans):
        if layout_key == "PA_BSND":
            block_size = k.shape[1]
            act_s2 = lk[b]
            at = [(int(block_table[b][j // block_size]), j % block_size) for j in range(act_s2)]
            keys = np.stack([k[i, o] for i, o in at]) if act_s2 else k[:0, 0]
            kscale = np.stack([ks[i, o] for i, o in at]) if act_s2 else ks[:0, 0]
        elif layout_key == "BSND":
            act_s2 = lk[b] if lk is not None else k.shape[1]
            keys, kscale = k[b, :act_s2], ks[b, :act_s2]
        else:
            k0 = lk[b - 1] if b else 0
            act_s2 = lk[b] - k0
            keys, kscale = k[k0:lk[b]], ks[k0:lk[b]]
        act_s1 = end - begin
        for r in range(act_s1):
            if layout_query == "TND":
                where, sel = (begin + r,), (begin + r,)
            else:
                where, sel = (b, r), (b, r)
            qr, wr, qsr = q[sel], w[sel], qs[sel]
            limit = visible_keys(sparse_mode, act_s1, act_s2, r)
            for g in range(n2):
                heads = slice(g * group, (g + 1) * group)
                dots = qr[heads] @ keys[:limit, g, :].T                    # [group, limit] exact int64
                scale = qsr[heads, None] * kscale[None, :limit, g]         # [group, limit]
                if numerics == "npu":
                    scores = npu_scores(dots, wr[heads], qsr[heads], kscale[:limit, g])
                else:
                    # summed head by head: every key gets the same order of additions, so equal
                    # keys score equally (a BLAS gemv may add its last columns in another order)
                    scores = (wr[heads, None] * np.maximum(scale * dots, 0.0)).sum(axis=0)  # [limit]
                mag = np.abs(wr[heads] * qsr[heads]) @ np.maximum(dots, 0) if limit else np.zeros(0)
                m = float(np.abs(kscale[:limit, g]).max() * mag.max()) if limit else 0.0
                yield Row(where + (g,), scores, m)


def lightning_indexer_quant(query, key, weights, query_dequant_scale, key_dequant_scale,
                            actual_seq_lengths_query=None, actual_seq_lengths_key=None, block_table=None,
                            layout_query="BSND", layout_key="PA_BSND", sparse_count=2048,
                            sparse_mode=3) -> Tuple[np.ndarray, np.ndarray]:
    """Return (sparse_indices int32, sparse_values float64) as the spec defines them."""
    q = np.asarray(query)
    n2 = np.asarray(key).shape[-2]
    lead = q.shape[:1] if layout_query == "TND" else q.shape[:2]
    indices = np.full(lead + (n2, sparse_count), -1, dtype=np.int32)
    values = np.full(lead + (n2, sparse_count), -np.inf, dtype=np.float64)
    for row in rows(query, key, weights, query_dequant_scale, key_dequant_scale, actual_seq_lengths_query,
                    actual_seq_lengths_key, block_table, layout_query, layout_key, sparse_mode):
        order = np.lexsort((np.arange(len(row.scores)), -row.scores))[:sparse_count]
        indices[row.out][:len(order)] = order
        values[row.out][:len(order)] = row.scores[order]
    return indices, values
