"""vLLM's ``vllm._custom_ops`` call forms, translated to ascend-ops (PyTorch)."""
from __future__ import annotations

from ._require import require_op

__all__ = ["reshape_and_cache_flash", "SUPPORTED_KV_CACHE_DTYPES"]

#: kv_cache_dtype values this translation supports: the cache has the dtype of key / value.
SUPPORTED_KV_CACHE_DTYPES = ("auto",)

_op = require_op("ascend_ops.reshape_and_cache", "ascend-op-reshape-and-cache", __name__)


def reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale):
    """vLLM's ``reshape_and_cache_flash``: write key / value ``[T, H, D]`` into the "flash" caches
    ``[num_blocks, block_size, H, D]`` at ``slot_mapping`` (negative slots are padding), in place.

    ``kv_cache_dtype`` must be ``"auto"`` (the cache has key's dtype; k_scale / v_scale are then
    unused, as in vLLM); an fp8 cache is refused with ValueError. Returns None.
    -> ``torch.ops.ascend_ops.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping)``.
    """
    if kv_cache_dtype not in SUPPORTED_KV_CACHE_DTYPES:
        raise ValueError(f"reshape_and_cache_flash: kv_cache_dtype should be one of {SUPPORTED_KV_CACHE_DTYPES} "
                         f"(the cache has the dtype of key) but is {kv_cache_dtype!r}: quantised (fp8) caches are "
                         "not supported by ascend_ops.reshape_and_cache")
    del k_scale, v_scale  # unused with kv_cache_dtype "auto", as in vLLM
    _op.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping)
    return None
