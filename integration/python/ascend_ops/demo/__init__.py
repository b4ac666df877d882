"""``ascend-ops demo``: a DeepSeek-V3.2-style sparse-attention decode loop on a paged KV cache.

A tiny MLA decoder with fixed-seed random weights (:mod:`.model`) generates greedily for a batch
of prompts of different lengths, running the whole DSA pipeline on our four ops as an inference
engine does: per layer, ``reshape_and_cache`` writes the latent + rope caches (latent as key,
rope as value) and, key-only, the indexer's key cache; ``lightning_indexer`` selects over the
indexer keys; ``sparse_flash_attention`` attends with the absorbed queries over the selected
latent and rope rows; after sampling greedily, ``adv_step_flash`` advances the metadata. It runs
in PyTorch eager and ``torch.compile`` (:mod:`.torch_engine`), MindSpore PyNative and Graph mode
(:mod:`.mindspore_engine`), and checks that every mode produces exactly the tokens of a dense,
un-absorbed float64 NumPy reference of the same model (:mod:`.reference`). :func:`run` prints tokens/s and a per-op time breakdown.
"""
from .model import Config
from .runner import MODES, Report, run

__all__ = ["Config", "MODES", "Report", "run"]
