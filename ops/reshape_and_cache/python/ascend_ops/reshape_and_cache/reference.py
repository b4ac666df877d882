"""NumPy golden reference of reshape_and_cache, written from the specification alone.

Shares no code with the kernels. bfloat16 arrays are passed as their uint16 bit patterns
(NumPy has no bfloat16); the op is a bit copy, so that changes nothing.
"""
from __future__ import annotations

import numpy as np

__all__ = ["reshape_and_cache"]


def reshape_and_cache(
    key: np.ndarray,          # [T, H, Dk]
    value: np.ndarray,        # [T, H, Dv]
    key_cache: np.ndarray,    # [num_blocks, block_size, H, Dk]
    value_cache: np.ndarray,  # [num_blocks, block_size, H, Dv]
    slot_mapping: np.ndarray,  # [T'], T' <= T
) -> tuple[np.ndarray, np.ndarray]:
    """Return (key_cache, value_cache) after the write, as new arrays.

    For every t < T' with s = slot_mapping[t]: s < 0 writes nothing (padding);
    otherwise key_cache[s // block_size, s % block_size] = key[t] and the same for value.
    Raises IndexError for s >= num_blocks * block_size. Duplicate slots: the last token wins
    here; the op itself does not promise which one.
    """
    key_out = key_cache.copy()
    value_out = value_cache.copy()
    num_blocks, block_size = key_cache.shape[:2]
    num_slots = num_blocks * block_size
    for t, slot in enumerate(np.asarray(slot_mapping).tolist()):
        if slot < 0:
            continue
        if slot >= num_slots:
            raise IndexError(f"slot_mapping[{t}] = {slot} is out of range ({num_slots} slots)")
        block, offset = divmod(slot, block_size)
        key_out[block, offset] = key[t]
        value_out[block, offset] = value[t]
    return key_out, value_out
