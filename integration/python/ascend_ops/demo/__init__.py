"""``ascend-ops demo``: a DeepSeek-V3.2-style sparse-attention decode loop on a paged KV cache.

A tiny decoder with fixed-seed random weights (:mod:`.model`) generates greedily for a batch of
prompts of different lengths, using the three ops as an inference engine does: the prefill
writes every prompt's K/V with ``reshape_and_cache``; each decode step scores the cache with
``lightning_indexer``, attends over the selected tokens with the framework's own ops, samples
greedily, advances the metadata with ``adv_step_flash`` and writes the new K/V with
``reshape_and_cache``. It runs in PyTorch eager and ``torch.compile`` (:mod:`.torch_engine`),
MindSpore PyNative and Graph mode (:mod:`.mindspore_engine`), and checks that every mode
produces exactly the tokens of a dense float64 NumPy reference of the same model
(:mod:`.reference`). :func:`run` prints tokens/s and a per-op time breakdown.
"""
from .model import Config
from .runner import MODES, Report, run

__all__ = ["Config", "MODES", "Report", "run"]
