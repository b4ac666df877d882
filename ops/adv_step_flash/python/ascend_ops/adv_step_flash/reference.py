"""NumPy golden reference of advance_step_flashattn, written from the specification alone.

Shares no code with the kernels. Python integers throughout: the arithmetic is exact for any
position, and a value that does not fit its output dtype is reported, never wrapped.
"""
from __future__ import annotations

from typing import Dict

import numpy as np

__all__ = ["advance_step_flashattn"]


def _fits(value: int, dtype: np.dtype) -> bool:
    info = np.iinfo(dtype)
    return info.min <= value <= info.max


def advance_step_flashattn(
    num_seqs: int,
    num_queries: int,
    block_size: int,
    input_tokens: np.ndarray,       # [num_seqs]
    sampled_token_ids: np.ndarray,  # [num_queries, 1] or [num_queries]
    input_positions: np.ndarray,    # [num_seqs]
    seq_lens: np.ndarray,           # [num_seqs]
    slot_mapping: np.ndarray,       # [num_seqs]
    block_tables: np.ndarray,       # [num_seqs, max_blocks_per_seq]
) -> Dict[str, np.ndarray]:
    """Return the four outputs after one step, as new arrays (dtypes of the inputs).

    For i < num_queries::

        input_tokens[i]    = sampled_token_ids[i]
        pos                = seq_lens[i]
        seq_lens[i]        = pos + 1
        input_positions[i] = pos
        slot_mapping[i]    = block_tables[i][pos // block_size] * block_size + pos % block_size

    For num_queries <= i < num_seqs (padding rows): input_tokens[i] = 0,
    input_positions[i] = 0, slot_mapping[i] = -1, seq_lens[i] unchanged.

    Raises ValueError for num_queries > num_seqs, a negative seq_len or block id, or a value
    that does not fit its output dtype; IndexError for pos // block_size >= max_blocks_per_seq.
    """
    if not 0 < num_queries <= num_seqs:
        raise ValueError(f"need 0 < num_queries <= num_seqs, got {num_queries} and {num_seqs}")
    if block_size <= 0:
        raise ValueError(f"block_size should be > 0, got {block_size}")
    out = {
        "input_tokens": np.array(input_tokens, copy=True),
        "input_positions": np.array(input_positions, copy=True),
        "seq_lens": np.array(seq_lens, copy=True),
        "slot_mapping": np.array(slot_mapping, copy=True),
    }
    sampled = np.asarray(sampled_token_ids).reshape(-1).tolist()
    lens = np.asarray(seq_lens).tolist()
    tables = np.asarray(block_tables)
    max_blocks = tables.shape[1]
    for i in range(num_queries):
        token, pos = int(sampled[i]), int(lens[i])
        if pos < 0:
            raise ValueError(f"seq_lens[{i}] = {pos} is negative")
        index, offset = divmod(pos, block_size)
        if index >= max_blocks:
            raise IndexError(f"block index {index} of sequence {i} is beyond the table ({max_blocks})")
        block = int(tables[i, index])
        if block < 0:
            raise ValueError(f"block_tables[{i}, {index}] = {block} is negative")
        slot = block * block_size + offset
        for name, value in (("input_tokens", token), ("input_positions", pos), ("seq_lens", pos + 1),
                            ("slot_mapping", slot)):
            if not _fits(value, out[name].dtype):
                raise ValueError(f"{name}[{i}] = {value} does not fit {out[name].dtype}")
        out["input_tokens"][i] = token
        out["input_positions"][i] = pos
        out["seq_lens"][i] = pos + 1
        out["slot_mapping"][i] = slot
    out["input_tokens"][num_queries:num_seqs] = 0
    out["input_positions"][num_queries:num_seqs] = 0
    out["slot_mapping"][num_queries:num_seqs] = -1
    return out
