"""NumPy golden reference of lightning_indexer, written from the specification alone.

Shares no code with the kernels. Scores are computed in float64 from the inputs' exact values
(pass bfloat16 data already widened to float32, e.g. with
``ascend_ops.devkit.testing.from_bf16_bits``).

For batch b with act_s1 query rows and act_s2 keys::

    score[r, j] = sum_h weights[r, h] * ReLU(dot(query[r, h, :], key[j, g, :]))   (h in key head g's group)
    visible(r, j) = j < act_s2                          sparse_mode 0
                  = j < (t + 1) // cmp_ratio            sparse_mode 3, with t the row's absolute
                                                        position in the original key stream:
      t = act_s2 * cmp_ratio + cmp_residual_k[b] - act_s1 + r   (act_s2 counts compressed rows)
    (cmp_ratio 1, no residual: j <= act_s2 - act_s1 + r)
    sparse_indices[r, g, :] = visible j by descending score, ties to the smaller j, -1 tail
    sparse_values[r, g, :]  = their scores, -inf where the index is -1

Key head g (of N2) serves query heads g * N1/N2 ... (g + 1) * N1/N2 - 1; N2 = 1 on NPU.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional, Tuple

import numpy as np

__all__ = ["lightning_indexer", "Row", "rows", "visible_keys"]


@dataclass
class Row:
    """One output row: where it goes, the visible keys' float64 scores (index j at position j)
    and the row's magnitude sum_h |w| * sum_d |q k| (max over keys) for tolerances."""

    out: Tuple[int, ...]     # index of the row in the outputs, without the last (K) axis
    scores: np.ndarray       # [visible] float64
    magnitude: float


def _lengths(x: Optional[np.ndarray]) -> Optional[list]:
    return None if x is None else [int(v) for v in np.asarray(x).reshape(-1)]


def visible_keys(sparse_mode, act_s1, act_s2, r, cmp_ratio=1, cmp_residual=0) -> int:
    """Keys [0, result) visible to row r of a batch, from the specification: under sparse_mode 3
    the row sits at original position t = act_s2 * cmp_ratio + cmp_residual - act_s1 + r and sees
    compressed row j iff j < (t + 1) // cmp_ratio (Python's floor division)."""
    if sparse_mode == 0:
        return act_s2
    t = act_s2 * cmp_ratio + cmp_residual - act_s1 + r
    return min(max((t + 1) // cmp_ratio, 0), act_s2)


def rows(query, key, weights, actual_seq_lengths_query=None, actual_seq_lengths_key=None, block_table=None,
         layout_query="BSND", layout_key="PA_BSND", sparse_mode=3, cmp_ratio=1,
         cmp_residual_k=None) -> Iterator[Row]:
    """Every output row that belongs to a batch, with its visible scores (float64)."""
    q = np.asarray(query, dtype=np.float64)
    k = np.asarray(key, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    lq, lk = _lengths(actual_seq_lengths_query), _lengths(actual_seq_lengths_key)
    residual = _lengths(cmp_residual_k)
    n1, n2 = q.shape[-2], k.shape[-2]
    group = n1 // n2
    if layout_query == "TND":
        batch = len(lq)
        q_spans = [((lq[b - 1] if b else 0), lq[b]) for b in range(batch)]
    else:
        batch, s1 = q.shape[0], q.shape[1]
        q_spans = [(0, lq[b] if lq is not None else s1) for b in range(batch)]
    for b in range(batch):
        # this batch's keys [act_s2, N2, D]
        if layout_key == "PA_BSND":
            block_size = k.shape[1]
            act_s2 = lk[b]
            ids = [int(block_table[b][j // block_size]) for j in range(act_s2)]
            keys = np.stack([k[ids[j], j % block_size] for j in range(act_s2)]) if act_s2 else k[:0, 0]
        elif layout_key == "BSND":
            act_s2 = lk[b] if lk is not None else k.shape[1]
            keys = k[b, :act_s2]
        else:
            begin = lk[b - 1] if b else 0
            act_s2 = lk[b] - begin
            keys = k[begin:lk[b]]
        begin, end = q_spans[b]
        act_s1 = end - begin
        for r in range(act_s1):
            if layout_query == "TND":
                qr, wr, where = q[begin + r], w[begin + r], (begin + r,)
            else:
                qr, wr, where = q[b, r], w[b, r], (b, r)
            limit = visible_keys(sparse_mode, act_s1, act_s2, r, cmp_ratio, residual[b] if residual else 0)
            for g in range(n2):
                heads = slice(g * group, (g + 1) * group)
                kg = keys[:limit, g, :]                     # [limit, D]
                dots = qr[heads] @ kg.T                     # [group, limit]
                # summed head by head: every key gets the same order of additions, so equal keys
                # score equally (a BLAS gemv may add its last columns in another order)
                scores = (wr[heads, None] * np.maximum(dots, 0.0)).sum(axis=0)  # [limit]
                mag = np.abs(wr[heads]) @ (np.abs(qr[heads]) @ np.abs(kg).T) if limit else np.zeros(0)
                yield Row(where + (g,), scores, float(mag.max()) if limit else 0.0)


def lightning_indexer(query, key, weights, actual_seq_lengths_query=None, actual_seq_lengths_key=None,
                      block_table=None, layout_query="BSND", layout_key="PA_BSND", sparse_count=2048,
                      sparse_mode=3, cmp_ratio=1, cmp_residual_k=None) -> Tuple[np.ndarray, np.ndarray]:
    """Return (sparse_indices int32, sparse_values float64) as the spec defines them."""
    q = np.asarray(query)
    n2 = np.asarray(key).shape[-2]
    lead = q.shape[:1] if layout_query == "TND" else q.shape[:2]
    indices = np.full(lead + (n2, sparse_count), -1, dtype=np.int32)
    values = np.full(lead + (n2, sparse_count), -np.inf, dtype=np.float64)
    for row in rows(query, key, weights, actual_seq_lengths_query, actual_seq_lengths_key, block_table,
                    layout_query, layout_key, sparse_mode, cmp_ratio, cmp_residual_k):
        order = np.lexsort((np.arange(len(row.scores)), -row.scores))[:sparse_count]
        indices[row.out][:len(order)] = order
        values[row.out][:len(order)] = row.scores[order]
    return indices, values
