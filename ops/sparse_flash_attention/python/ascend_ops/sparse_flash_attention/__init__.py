"""sparse_flash_attention: DeepSeek-V3.2's sparse MLA attention over the keys lightning_indexer selects.

For every query row, attention of its N1 heads over the selected positions of the paged MLA
latent cache (latent as K and V, rope columns added to the logits)::

    attention_out[r, h] = sum_j softmax_j(scale * (q[r, h] . Kn(P[j]) + q_rope[r, h] . Kr(P[j]))) * V(P[j])

PyTorch: ``torch.ops.ascend_ops.sparse_flash_attention``, registered as soon as both torch and
this package are imported, in either order (this package never imports torch itself). NumPy
arrays run the C++ CPU kernel directly.
"""
from ascend_ops.common.torch_registration import register_when_torch_imported as _register_when_torch_imported

from ._version import __version__
from .api import sparse_flash_attention

__all__ = ["__version__", "sparse_flash_attention"]

_register_when_torch_imported(__name__)
