"""NumPy golden reference of sparse_flash_attention, written from the specification alone.

Shares no code with the kernels. Everything is float64 from the inputs' exact values (pass
bfloat16 data as ``ml_dtypes.bfloat16`` or already widened), and the probabilities are not
rounded: the tolerance (:func:`tolerance`) accounts for the kernels' rounding steps.

For batch b, row r (0-based within the batch), with thr the row's window::

    thr = act_kv                      sparse_mode 0
        = act_kv - act_q + r + 1      sparse_mode 3
    n   = min(K, ceil(thr / sbs)) if thr > 0 else 0
    P   = for the first n entries x of the row's indices, up to the first -1: the positions
          [x * sbs, min(x * sbs + sbs, thr)) of entries with x * sbs < thr (repeats kept)
    s_j = scale * (q[r, h] . Kn(P[j]) + q_rope[r, h] . Kr(P[j]))
    out[r, h] = sum_j softmax(s)_j V(P[j]);  softmax_max = max_j s_j;  softmax_sum = sum_j exp(s_j - max)

Rows with P empty and rows outside every batch: zeros (out, max and sum).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, List, Optional, Tuple

import numpy as np

__all__ = ["sparse_flash_attention", "Row", "rows", "selected_positions", "tolerance"]


@dataclass
class Row:
    """One query row that belongs to a batch: where its outputs go and what it attends."""

    batch: int
    r: int                 # row within the batch
    out: Tuple[int, ...]   # index of the row in attention_out, without the (N1, D) axes
    lse: Tuple[int, ...]   # index of the row in softmax_max, without the G axis (N2 = 1 -> 0)
    positions: List[int]   # P


def _ints(x) -> Optional[List[int]]:
    return None if x is None else [int(v) for v in np.asarray(x).reshape(-1)]


def selected_positions(indices, thr: int, sbs: int) -> List[int]:
    """The contract's P for one row: its indices (K entries), window thr, sparse_block_size sbs."""
    if thr <= 0:
        return []
    n = min(len(indices), -(-thr // sbs))
    P: List[int] = []
    for x in (int(v) for v in indices[:n]):
        if x == -1:
            break
        if x < -1:
            raise IndexError(f"sparse_indices entry {x} < -1")
        lo = x * sbs
        if lo >= thr:
            continue
        P.extend(range(lo, min(lo + sbs, thr)))
    return P


def rows(query, sparse_indices, actual_seq_lengths_query=None, actual_seq_lengths_kv=None, key_rows=None,
         layout_query="BSND", layout_kv="PA_BSND", sparse_mode=3, sparse_block_size=1) -> Iterator[Row]:
    """Every query row of a batch with its selected positions (batch-relative)."""
    lq, lkv = _ints(actual_seq_lengths_query), _ints(actual_seq_lengths_kv)
    idx = np.asarray(sparse_indices)
    if layout_query == "TND":
        B = len(lq)
        q_begin = [0] + lq[:-1]
        q_len = [lq[b] - q_begin[b] for b in range(B)]
    else:
        B, S1 = query.shape[0], query.shape[1]
        q_begin = [b * S1 for b in range(B)]
        q_len = lq if lq is not None else [S1] * B
    if layout_kv == "TND":
        kv_len = [lkv[b] - (lkv[b - 1] if b else 0) for b in range(B)]
    else:
        kv_len = lkv if lkv is not None else [key_rows] * B
    flat = idx.reshape(-1, idx.shape[-1])
    for b in range(B):
        for r in range(q_len[b]):
            thr = kv_len[b] if sparse_mode == 0 else kv_len[b] - q_len[b] + r + 1
            row = q_begin[b] + r
            out = (row,) if layout_query == "TND" else (b, r)
            lse = (0, row) if layout_query == "TND" else (b, 0, r)
            yield Row(b, r, out, lse, selected_positions(flat[row], thr, sparse_block_size))


def _gather(cache, positions, b, layout_kv, block_table, actual_seq_lengths_kv) -> np.ndarray:
    """[len(positions), width] float64 rows of one KV-side tensor for batch b."""
    c = np.asarray(cache)
    if layout_kv == "PA_BSND":
        bt = np.asarray(block_table)
        bs = c.shape[1]
        return np.stack([c[bt[b, p // bs], p % bs, 0] for p in positions]).astype(np.float64)
    if layout_kv == "BSND":
        return c[b, positions, 0].astype(np.float64)
    begin = 0 if b == 0 else int(np.asarray(actual_seq_lengths_kv).reshape(-1)[b - 1])
    return c[[begin + p for p in positions], 0].astype(np.float64)


def sparse_flash_attention(query, key, value, sparse_indices, scale_value, *, block_table=None,
                           actual_seq_lengths_query=None, actual_seq_lengths_kv=None, query_rope=None,
                           key_rope=None, sparse_block_size=1, layout_query="BSND", layout_kv="PA_BSND",
                           sparse_mode=3) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(attention_out, softmax_max, softmax_sum), all float64; lse shaped [B, 1, S1, N1] or [1, T1, N1]."""
    q = np.asarray(query).astype(np.float64)
    qr = np.asarray(query_rope).astype(np.float64)
    n1 = q.shape[-2]
    out = np.zeros(q.shape, dtype=np.float64)
    lse_shape = (1, q.shape[0], n1) if layout_query == "TND" else (q.shape[0], 1, q.shape[1], n1)
    m_out = np.zeros(lse_shape, dtype=np.float64)
    l_out = np.zeros(lse_shape, dtype=np.float64)
    key_rows = np.asarray(key).shape[1] if layout_kv == "BSND" else None
    for row in rows(q, sparse_indices, actual_seq_lengths_query, actual_seq_lengths_kv, key_rows, layout_query,
                    layout_kv, sparse_mode, sparse_block_size):
        if not row.positions:
            continue
        where = (row.positions, row.batch, layout_kv, block_table, actual_seq_lengths_kv)
        kn, kr, v = _gather(key, *where), _gather(key_rope, *where), _gather(value, *where)
        s = scale_value * (q[row.out] @ kn.T + qr[row.out] @ kr.T)  # [N1, |P|]
        m = s.max(axis=-1)
        e = np.exp(s - m[:, None])
        l = e.sum(axis=-1)
        out[row.out] = (e / l[:, None]) @ v
        m_out[row.lse] = m
        l_out[row.lse] = l
    return out, m_out, l_out


def tolerance(query, key, value, sparse_indices, scale_value, *, dtype_unit: float, block_table=None,
              actual_seq_lengths_query=None, actual_seq_lengths_kv=None, query_rope=None, key_rope=None,
              sparse_block_size=1, layout_query="BSND", layout_kv="PA_BSND", sparse_mode=3):
    """The contract's bounds per element: (attention_out bound without the u * |ref| term,
    softmax_max bound, softmax_sum bound relative to |l|), shaped like the outputs. dtype_unit u:
    2**-8 bfloat16, 2**-11 float16, 0 float32 (then only the float32 logit term remains)."""
    q = np.abs(np.asarray(query).astype(np.float64))
    qr = np.abs(np.asarray(query_rope).astype(np.float64))
    out_b = np.zeros(q.shape, dtype=np.float64)
    lse_shape = (1, q.shape[0], q.shape[-2]) if layout_query == "TND" else (q.shape[0], 1, q.shape[1], q.shape[-2])
    max_b = np.zeros(lse_shape)
    sum_b = np.zeros(lse_shape)
    key_rows = np.asarray(key).shape[1] if layout_kv == "BSND" else None
    for row in rows(q, sparse_indices, actual_seq_lengths_query, actual_seq_lengths_kv, key_rows, layout_query,
                    layout_kv, sparse_mode, sparse_block_size):
        if not row.positions:
            continue
        where = (row.positions, row.batch, layout_kv, block_table, actual_seq_lengths_kv)
        kn, kr, v = (np.abs(_gather(t, *where)) for t in (key, key_rope, value))
        mqk = abs(scale_value) * (q[row.out] @ kn.T + qr[row.out] @ kr.T).max(axis=-1)  # [N1]
        vmax = v.max(axis=0)  # [D]
        out_b[row.out] = (2 * dtype_unit + 4e-5 * mqk[:, None]) * vmax[None, :]
        max_b[row.lse] = 4e-5 * mqk
        sum_b[row.lse] = 4e-5 * (1 + mqk)
    return out_b, max_b, sum_b
