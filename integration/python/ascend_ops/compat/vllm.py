"""vLLM's ``vllm._custom_ops`` call forms, translated to ascend-ops (PyTorch)."""
from __future__ import annotations

from ._require import require_op

__all__ = ["reshape_and_cache_flash", "reshape_and_cache", "indexer_k_quant_and_cache", "advance_step_flashattn",
           "SUPPORTED_KV_CACHE_DTYPES"]

#: kv_cache_dtype values this translation supports: "auto" (the cache has the dtype of key /
#: value, a bit copy) and vLLM's fp8 names ("fp8" = "fp8_e4m3": OCP E4M3FN bytes).
SUPPORTED_KV_CACHE_DTYPES = ("auto", "fp8", "fp8_e4m3", "fp8_e5m2")

_op = require_op("ascend_ops.reshape_and_cache", "ascend-op-reshape-and-cache", __name__)
_ikq = require_op("ascend_ops.indexer_k_quant_and_cache", "ascend-op-indexer-k-quant-and-cache", __name__)
_asf = require_op("ascend_ops.adv_step_flash", "ascend-op-adv-step-flash", __name__)


def _fp8_cache_as_bytes(cache, kv_cache_dtype: str, name: str, op: str = "reshape_and_cache_flash"):
    """vLLM allocates fp8 caches as uint8; a cache viewed as torch's float8 type is written
    through a uint8 view of the same memory, if the float8 format is the mode's."""
    import torch

    formats = {torch.float8_e4m3fn: ("fp8", "fp8_e4m3"), torch.float8_e5m2: ("fp8_e5m2",)}
    if cache is None or cache.dtype not in formats:
        return cache
    if kv_cache_dtype not in formats[cache.dtype]:
        raise TypeError(f"{op}: {name} should hold the format of kv_cache_dtype "
                        f"{kv_cache_dtype!r} but has dtype {cache.dtype}")
    return cache.view(torch.uint8)


def reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale):
    """vLLM's ``reshape_and_cache_flash``: write key / value ``[T, H, D]`` into the "flash" caches
    ``[num_blocks, block_size, H, D]`` at ``slot_mapping`` (negative slots are padding), in place.

    ``kv_cache_dtype`` "auto": a bit copy, the cache has key's dtype, k_scale / v_scale unused
    (as in vLLM). "fp8" / "fp8_e4m3" / "fp8_e5m2": quantize on write, ``fp8(x / scale)`` in
    float32 with round-to-nearest-even and saturation (vLLM's ``scaled_vec_conversion``), into
    uint8 caches (as vLLM allocates them) or caches of torch's matching float8 dtype; k_scale /
    v_scale are float32 ``[1]`` or ``[H]`` as in vLLM. Returns None.
    -> ``torch.ops.ascend_ops.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping,
    kv_cache_dtype=..., k_scale=..., v_scale=...)``.
    """
    _write("reshape_and_cache_flash", key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale,
           v_scale, cache_mode=0)
    return None


def reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale):
    """vLLM's ``reshape_and_cache`` (the paged-attention cache layout its CUDA paged-attention
    kernels read): key ``[T, H, D]`` into ``key_cache [num_blocks, H, D/x, block_size, x]`` and
    value ``[T, H, D]`` into ``value_cache [num_blocks, H, D, block_size]``, x = 16 bytes / the
    cache's element size (vLLM's definition), at ``slot_mapping`` (negative slots are padding), in
    place. ``kv_cache_dtype`` and the scales as :func:`reshape_and_cache_flash`. Returns None.
    Written natively by the cpu backend; the npu / emu kernel refuses this layout (its chunks
    are x * itemsize = 16 bytes, the kernel writes 32-byte bursts), with a ValueError.
    -> ``torch.ops.ascend_ops.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping,
    cache_mode=3, kv_cache_dtype=..., k_scale=..., v_scale=...)``.
    """
    _write("reshape_and_cache", key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale,
           cache_mode=3)
    return None


def _write(op, key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale, cache_mode):
    if kv_cache_dtype not in SUPPORTED_KV_CACHE_DTYPES:
        raise ValueError(f"{op}: kv_cache_dtype should be one of {SUPPORTED_KV_CACHE_DTYPES} "
                         f"but is {kv_cache_dtype!r}")
    if kv_cache_dtype == "auto":
        del k_scale, v_scale  # unused with kv_cache_dtype "auto", as in vLLM
        _op.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, cache_mode=cache_mode)
        return
    key_cache = _fp8_cache_as_bytes(key_cache, kv_cache_dtype, "key_cache", op)
    value_cache = _fp8_cache_as_bytes(value_cache, kv_cache_dtype, "value_cache", op)
    _op.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, cache_mode=cache_mode,
                          kv_cache_dtype=kv_cache_dtype, k_scale=k_scale, v_scale=v_scale)


def indexer_k_quant_and_cache(k, kv_cache, slot_mapping, quant_block_size, scale_fmt):
    """vLLM's ``indexer_k_quant_and_cache``: quantize the DSA indexer keys ``k [T, D]`` to fp8
    E4M3FN with one float32 scale per ``quant_block_size`` group and write both into vLLM's
    fused uint8 cache ``[num_blocks, block_size, D + 4 * D / quant_block_size]`` (a block holds
    its block_size code rows, then its scales). As in vLLM, ``scale_fmt == "ue8m0"`` rounds the
    scales up to powers of two and any other value (vLLM passes a string; None here too) keeps
    them float32. Returns None.
    -> ``torch.ops.ascend_ops.indexer_k_quant_and_cache(k, kv_cache, slot_mapping,
    quant_block_size=..., scale_fmt="ue8m0" or None)``.
    """
    _ikq.indexer_k_quant_and_cache(k, kv_cache, slot_mapping, quant_block_size=quant_block_size,
                                   scale_fmt="ue8m0" if scale_fmt == "ue8m0" else None)
    return None


def advance_step_flashattn(num_seqs, num_queries, block_size, input_tokens, sampled_token_ids, input_positions,
                           seq_lens, slot_mapping, block_tables):
    """vLLM's ``advance_step_flashattn`` (``vllm._custom_ops``, ``csrc/prepare_inputs/advance_step.cu``):
    advance a multi-step decode batch by one step, in place, in vLLM's argument order (every
    argument positional or by keyword). vLLM's dtypes (int64 input_tokens [num_seqs],
    sampled_token_ids [num_queries, 1], input_positions and slot_mapping; int32 seq_lens and
    block_tables [num_seqs, max_blocks]) and its CUDA-graph padding (rows num_queries..num_seqs:
    token 0, position 0, slot -1). Ours also takes int32 / int64 for each and a block table whose
    row stride exceeds its width; vLLM's is contiguous. Returns None, as vLLM.
    -> ``torch.ops.ascend_ops.advance_step_flashattn(...)``."""
    _asf.advance_step_flashattn(num_seqs, num_queries, block_size, input_tokens, sampled_token_ids,
                                input_positions, seq_lens, slot_mapping, block_tables)
    return None
