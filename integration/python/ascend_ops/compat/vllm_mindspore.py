"""vLLM-MindSpore's ``vllm_mindspore._custom_ops`` call forms, translated to ascend-ops."""
from __future__ import annotations

from ._require import require_op

__all__ = ["advance_step_flashattn"]

_op = require_op("ascend_ops.adv_step_flash", "ascend-op-adv-step-flash", __name__)


def advance_step_flashattn(num_seqs, num_queries, block_size, input_tokens, sampled_token_ids, input_positions,
                           seq_lens, slot_mapping, block_tables):
    """``vllm_mindspore._custom_ops.advance_step_flashattn``: advance a multi-step decode batch
    by one step, in place (MindSpore tensors; torch and NumPy work too). Same keywords; returns
    None like the original. -> :func:`ascend_ops.adv_step_flash.advance_step_flashattn`."""
    _op.advance_step_flashattn(num_seqs, num_queries, block_size, input_tokens, sampled_token_ids, input_positions,
                              seq_lens, slot_mapping, block_tables)
    return None
