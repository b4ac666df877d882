"""reshape_and_cache: write a step's key and value vectors into a paged KV cache.

    key_cache[s // block_size, s % block_size] = key[t]
    value_cache[s // block_size, s % block_size] = value[t]      for t < T', s = slot_mapping[t] >= 0

PyTorch: ``torch.ops.ascend_ops.reshape_and_cache``,
registered as soon as both torch and this package are imported, in either order (this package
never imports torch itself). MindSpore: the same function with
MindSpore tensors or Parameters, in PyNative and Graph mode (``ascend_ops.reshape_and_cache.ms``).
"""
from ascend_ops.common.torch_registration import register_when_torch_imported as _register_when_torch_imported

from ._version import __version__
from .api import reshape_and_cache

__all__ = ["__version__", "reshape_and_cache"]

_register_when_torch_imported(__name__)
