"""lightning_indexer: the DeepSeek-V3.2 sparse-attention indexer.

For every query token, scores every visible key token and returns the indices of the top
``sparse_count``::

    score[r, j] = sum_h weights[r, h] * ReLU(query[r, h, :] . key[j, :])     (float32 accumulation)

PyTorch: ``torch.ops.ascend_ops.lightning_indexer`` (after importing this package with torch
tensors once, or ``ascend_ops.lightning_indexer.torch_ops``). NumPy arrays run the C++ CPU
kernel directly.
"""
from ._version import __version__
from .api import lightning_indexer

__all__ = ["__version__", "lightning_indexer"]
