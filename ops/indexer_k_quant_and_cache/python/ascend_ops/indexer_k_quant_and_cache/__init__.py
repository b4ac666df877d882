"""indexer_k_quant_and_cache: quantise DSA indexer keys per token group and write them, with their
scales, into a paged cache (vLLM's fused fp8 byte layout or the Ascend split int8 + scale layout).

    sc_g = amax_g / 448 (fused, fp8 E4M3FN) or amax_g / 127 (split, int8);  q = code(k[t] / sc_g)

PyTorch: ``torch.ops.ascend_ops.indexer_k_quant_and_cache``, registered as soon as both torch and
this package are imported, in either order (this package never imports torch itself). MindSpore:
``ascend_ops.indexer_k_quant_and_cache.ms``. NumPy arrays run the C++ CPU kernel directly.
"""
from ascend_ops.common.torch_registration import register_when_torch_imported as _register_when_torch_imported

from ._version import __version__
from .api import indexer_k_quant_and_cache

__all__ = ["__version__", "indexer_k_quant_and_cache"]

_register_when_torch_imported(__name__)
