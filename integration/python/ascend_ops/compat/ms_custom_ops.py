"""ms_custom_ops' call forms (MindSpore), translated to ascend-ops.

``ms_custom_ops.reshape_and_cache(key, value=None, key_cache=None, value_cache=None,
slot_mapping=None, cache_mode=0, head_num=0)`` -> :func:`ascend_ops.reshape_and_cache.ms.reshape_and_cache`.
"""
from __future__ import annotations

from ._require import require_op

__all__ = ["reshape_and_cache"]

# At import, so that graph compilers see a plain module attribute (ImportError names the package).
_ops = require_op("ascend_ops.reshape_and_cache.ms", "ascend-op-reshape-and-cache", __name__)


def reshape_and_cache(key, value=None, key_cache=None, value_cache=None, slot_mapping=None, cache_mode=0,
                      head_num=0):
    """ms_custom_ops' ``reshape_and_cache``: write key (and value) rows into paged caches in place.

    Same arguments, keywords and defaults as ms_custom_ops. ``value`` / ``value_cache`` None: a
    key-only cache. ``cache_mode`` 0 = ND ``[num_blocks, block_size, H, D]``, 1 = FRACTAL_NZ; our
    NZ cache is a plain tensor holding the NZ bytes, shaped ``[num_blocks, H*D/F, block_size, F]``
    (F = 16 for float16 / bfloat16, 32 for int8), where ms_custom_ops gives a tensor of host shape
    ``[num_blocks, block_size, H*D]`` in device format FRACTAL_NZ: the same bytes on the device.
    ``head_num`` 0 means "not given"; with a ``[T, H*D]`` key and an ND cache it is then taken
    from ``key_cache.shape[2]`` (H), as ms_custom_ops does; NZ needs it, as ms_custom_ops documents.

    Returns what ms_custom_ops returns: None in PyNative; in a graph a placeholder output to
    ignore (ms_custom_ops: key-shaped; ours: int32 [1]).
    """
    if head_num == 0 and cache_mode == 0 and key is not None and key_cache is not None \
            and len(key.shape) == 2 and len(key_cache.shape) == 4:
        head_num = key_cache.shape[2]
    return _ops.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, cache_mode,
                                 None if head_num == 0 else head_num)
