"""adv_step_flash: advance the decode metadata of a multi-step runner by one step, in place.

For i < num_queries::

    input_tokens[i]    = sampled_token_ids[i]
    input_positions[i] = seq_lens[i]
    seq_lens[i]       += 1
    slot_mapping[i]    = block_tables[i][pos // block_size] * block_size + pos % block_size

and for the padding rows num_queries <= i < num_seqs: token 0, position 0, slot -1.

PyTorch: ``torch.ops.ascend_ops.advance_step_flashattn``,
registered as soon as both torch and this package are imported, in either order (this package
never imports torch itself). MindSpore: the same function
with MindSpore tensors or Parameters, in PyNative and Graph mode (``ascend_ops.adv_step_flash.ms``).
"""
from ascend_ops.common.torch_registration import register_when_torch_imported as _register_when_torch_imported

from ._version import __version__
from .api import advance_step_flashattn

__all__ = ["__version__", "advance_step_flashattn"]

_register_when_torch_imported(__name__)
