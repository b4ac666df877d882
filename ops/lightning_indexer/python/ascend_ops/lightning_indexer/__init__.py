"""lightning_indexer: the DeepSeek-V3.2 sparse-attention indexer.

For every query token, scores every visible key token and returns the indices of the top
``sparse_count``::

    score[r, j] = sum_h weights[r, h] * ReLU(query[r, h, :] . key[j, :])     (float32 accumulation)

PyTorch: ``torch.ops.ascend_ops.lightning_indexer``,
registered as soon as both torch and this package are imported, in either order (this package
never imports torch itself). NumPy arrays run the C++ CPU
kernel directly.
"""
from ascend_ops.common.torch_registration import register_when_torch_imported as _register_when_torch_imported

from ._version import __version__
from .api import lightning_indexer

__all__ = ["__version__", "lightning_indexer"]

_register_when_torch_imported(__name__)
