"""lightning_indexer_quant: the DeepSeek-V3.2 indexer on int8 queries and keys.

For every query token, scores every visible key token and returns the indices of the top
``sparse_count``::

    score[r, j] = sum_h weights[r, h] * ReLU(qs[r, h] * ks[j] * (query[r, h, :] . key[j, :]))   (exact int32 dot)

PyTorch: ``torch.ops.ascend_ops.lightning_indexer_quant``, registered as soon as both torch and
this package are imported, in either order. NumPy arrays run the C++ CPU kernel directly.
"""
from ascend_ops.common.torch_registration import register_when_torch_imported as _register_when_torch_imported

from ascend_ops.lightning_indexer._version import __version__  # one package, one version
from .api import lightning_indexer_quant

__all__ = ["__version__", "lightning_indexer_quant"]

_register_when_torch_imported(__name__)
