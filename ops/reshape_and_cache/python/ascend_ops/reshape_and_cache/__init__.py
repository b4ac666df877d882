"""reshape_and_cache: write a step's key and value vectors into a paged KV cache.

    key_cache[s // block_size, s % block_size] = key[t]
    value_cache[s // block_size, s % block_size] = value[t]      for t < T', s = slot_mapping[t] >= 0

PyTorch: ``torch.ops.ascend_ops.reshape_and_cache`` (after importing this package with torch
tensors once, or ``ascend_ops.reshape_and_cache.torch_ops``). MindSpore: the same function with
MindSpore tensors or Parameters, in PyNative and Graph mode (``ascend_ops.reshape_and_cache.ms``).
"""
from ._version import __version__
from .api import reshape_and_cache

__all__ = ["__version__", "reshape_and_cache"]
