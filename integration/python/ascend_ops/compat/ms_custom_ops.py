"""ms_custom_ops' call forms (MindSpore), translated to ascend-ops.

``ms_custom_ops.reshape_and_cache(key, value=None, key_cache=None, value_cache=None,
slot_mapping=None, cache_mode=0, head_num=0)`` -> :func:`ascend_ops.reshape_and_cache.ms.reshape_and_cache`.
``ms_custom_ops.sparse_flash_attention(query, key, value, sparse_indices, block_table=None, ...)``
-> :func:`ascend_ops.sparse_flash_attention.ms.sparse_flash_attention`.
``ms_custom_ops.lightning_indexer(query, key, weights, actual_seq_lengths_query=None, ...)``
-> :func:`ascend_ops.lightning_indexer.ms.lightning_indexer`.
"""
from __future__ import annotations

from ._require import require_op

__all__ = ["lightning_indexer", "reshape_and_cache", "sparse_flash_attention"]

# At import, so that graph compilers see a plain module attribute (ImportError names the package).
_ops = require_op("ascend_ops.reshape_and_cache.ms", "ascend-op-reshape-and-cache", __name__)
_sfa_ops = require_op("ascend_ops.sparse_flash_attention.ms", "ascend-op-sparse-flash-attention", __name__)
_li_ops = require_op("ascend_ops.lightning_indexer.ms", "ascend-op-lightning-indexer", __name__)

#: ms_custom_ops' integer layout codes (``kQueryLayouts``, ``kKVLayouts``).
_QUERY_LAYOUTS = ("BSND", "TND")
_KV_LAYOUTS = ("BSND", "PA_BSND")
#: lightning_indexer's (``lightning_indexer_common.h``: ``kQueryLayouts``, ``kKeyLayouts``).
_LI_QUERY_LAYOUTS = ("BSND", "TND")
_LI_KEY_LAYOUTS = ("PA_BSND",)


def reshape_and_cache(key, value=None, key_cache=None, value_cache=None, slot_mapping=None, cache_mode=0,
                      head_num=0):
    """ms_custom_ops' ``reshape_and_cache``: write key (and value) rows into paged caches in place.

    Same arguments, keywords and defaults as ms_custom_ops. ``value`` / ``value_cache`` None: a
    key-only cache. ``cache_mode`` 0 = ND ``[num_blocks, block_size, H, D]``, 1 = FRACTAL_NZ; our
    NZ cache is a plain tensor holding the NZ bytes, shaped ``[num_blocks, H*D/F, block_size, F]``
    (F = 16 for float16 / bfloat16, 32 for int8), where ms_custom_ops gives a tensor of host shape
    ``[num_blocks, block_size, H*D]`` in device format FRACTAL_NZ: the same bytes on the device.
    ``head_num`` 0 means "not given"; with a ``[T, H*D]`` or ``[B, S, H*D]`` key and an ND cache it is taken
    from ``key_cache.shape[2]`` (H), as ms_custom_ops does; NZ needs it, as ms_custom_ops documents.

    Returns what ms_custom_ops returns: None in PyNative; in a graph a placeholder output to
    ignore (ms_custom_ops: key-shaped; ours: int32 [1]).
    """
    if head_num == 0 and cache_mode == 0 and key is not None and key_cache is not None \
            and len(key.shape) in (2, 3) and len(key_cache.shape) == 4:
        head_num = key_cache.shape[2]
    return _ops.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, cache_mode,
                                 None if head_num == 0 else head_num)


def sparse_flash_attention(query, key, value, sparse_indices, block_table=None, actual_seq_lengths_query=None,
                           actual_seq_lenghts_kv=None, query_rope=None, key_rope=None, scale_value=1.0,
                           sparse_block_size=1, layout_query=0, layout_kv=0, sparse_mode=3):
    """ms_custom_ops' ``sparse_flash_attention``: MLA-absorbed sparse attention, every argument
    positional or by keyword, in ms_custom_ops' order and with its defaults. Its keyword for the
    key lengths is spelled ``actual_seq_lenghts_kv``, as in its PyNative binding and its doc. The
    layouts are ints: ``layout_query`` 0 = "BSND", 1 = "TND"; ``layout_kv`` 0 = "BSND",
    1 = "PA_BSND" (any other value is refused with ValueError, as ms_custom_ops refuses it).
    MLA-absorb is implied (ms_custom_ops passes no attention_mode); no lse.

    Returns the attention output only, as ms_custom_ops.
    """
    if not (0 <= layout_query < len(_QUERY_LAYOUTS)) or not (0 <= layout_kv < len(_KV_LAYOUTS)):
        raise ValueError(f"sparse_flash_attention: layout_query should be 0 (BSND) or 1 (TND) and layout_kv 0 (BSND) "
                         f"or 1 (PA_BSND), as in ms_custom_ops, but are {layout_query} and {layout_kv}")
    out, _, _ = _sfa_ops.sparse_flash_attention(
        query, key, value, sparse_indices, scale_value, block_table, actual_seq_lengths_query,
        actual_seq_lenghts_kv, query_rope, key_rope, sparse_block_size, _QUERY_LAYOUTS[layout_query],
        _KV_LAYOUTS[layout_kv], sparse_mode)
    return out


def lightning_indexer(query, key, weights, actual_seq_lengths_query=None, actual_seq_lengths_key=None,
                      block_table=None, layout_query=0, layout_key=0, sparse_count=2048, sparse_mode=3):
    """ms_custom_ops' ``lightning_indexer`` (``ops/c_api/lightning_indexer``): the
    top-``sparse_count`` key positions per query token, every argument positional or by keyword,
    in ms_custom_ops' order and with its defaults. The layouts are ints as there:
    ``layout_query`` 0 = "BSND", 1 = "TND"; ``layout_key`` 0 = "PA_BSND", the only one (any
    other value is refused with ValueError, as ms_custom_ops refuses it). ``weights`` as they
    document it, ``[B, S1, N1, 1]`` / ``[T, N1, 1]`` (the op takes it; ``[B, S1, N1]`` too).

    Returns the int32 ``sparse_indices`` only, as ms_custom_ops; PyNative and graph mode.
    """
    if not (0 <= layout_query < len(_LI_QUERY_LAYOUTS)) or not (0 <= layout_key < len(_LI_KEY_LAYOUTS)):
        raise ValueError(f"lightning_indexer: layout_query should be 0 (BSND) or 1 (TND) and layout_key 0 (PA_BSND), "
                         f"as in ms_custom_ops, but are {layout_query} and {layout_key}")
    indices, _ = _li_ops.lightning_indexer(query, key, weights, actual_seq_lengths_query, actual_seq_lengths_key,
                                           block_table, None, _LI_QUERY_LAYOUTS[layout_query],
                                           _LI_KEY_LAYOUTS[layout_key], sparse_count, sparse_mode)
    return indices
