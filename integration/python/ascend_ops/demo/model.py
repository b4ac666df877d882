"""The demo's model, batch and paged KV-cache layout: one place every engine reads.

A tiny DeepSeek-V3.2-style decoder with fixed-seed random weights (nothing is downloaded):

    x      = embed[token] + pos_embed[position]
    layer  (x ``layers``):
        h       = rms_norm(x) * norm1
        q       = h @ wq   -> [heads, head_dim]        k = h @ wk, v = h @ wv -> [1, head_dim]
        (k, v) are written into the layer's paged cache at slot_mapping (reshape_and_cache)
        iq      = h @ wq_index -> [index_heads, head_dim]
        iw      = (h @ w_index_weights) * index_heads**-0.5 * head_dim**-0.5 -> [index_heads]
        sel     = lightning_indexer(iq, key_cache, iw, sparse_count, sparse_mode=3)
                  (score[j] = sum_h iw[h] * relu(iq[h] . k[j]) over the visible keys j <= position)
        attn    = softmax over the selected keys of q . k[sel] / sqrt(head_dim), times v[sel]
                  (one key/value head shared by every query head: one head group, N2 = 1)
        x       = x + attn @ wo
        x       = x + relu(rms_norm(x) * norm2 @ w1) @ w2
    logits = rms_norm(x) * norm_f @ w_out;  next token = argmax (greedy)

The indexer scores the layer's own key cache (index dim D = head_dim), so each layer writes one
key/value pair per token. Everything is float32 in the engines (the NumPy reference is
float64): every framework then agrees with the reference as long as the greedy margins and the
indexer's top-k boundary gaps are far above float32 rounding, which the reference measures and
the demo prints.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Tuple

import numpy as np

__all__ = ["Config", "Plan", "weights", "plan", "engine_layers", "LAYER_WEIGHTS", "ENGINE_LAYER_WEIGHTS"]

#: Per-layer weight names of :func:`weights`.
LAYER_WEIGHTS = ("norm1", "wq", "wk", "wv", "wo", "wq_index", "w_index_weights", "norm2", "w1", "w2")
#: Per-layer weights of the engines (:func:`engine_layers`): one fused input projection.
ENGINE_LAYER_WEIGHTS = ("norm1", "w_proj", "wo", "norm2", "w1", "w2")


@dataclass(frozen=True)
class Config:
    """Model, batch and cache sizes. Defaults finish all four modes in well under a minute."""

    vocab: int = 96
    hidden: int = 64
    layers: int = 2
    heads: int = 4              # attention query heads, one shared key/value head
    head_dim: int = 32          # also the indexer's D (it scores the layer's key cache)
    index_heads: int = 4        # the indexer's N1
    ffn: int = 128
    block_size: int = 8
    sparse_count: int = 16      # top-k of the indexer: smaller than most contexts, so it selects
    prompt_lens: Tuple[int, ...] = (5, 11, 17, 26)
    steps: int = 24             # decode steps: each sequence yields steps + 1 tokens
    seed: int = 3              # greedy margins >= 1.9e-3, indexer boundary gaps >= 1.4e-4 (relative)
    eps: float = 1e-6

    def __post_init__(self) -> None:
        if self.steps < 1:
            raise ValueError(f"demo: steps should be >= 1, got {self.steps}")
        if not self.prompt_lens or min(self.prompt_lens) < 1:
            raise ValueError(f"demo: prompt lengths should be >= 1, got {self.prompt_lens}")
        if not 1 <= self.sparse_count <= 8192:
            raise ValueError(f"demo: sparse_count should be in [1, 8192], got {self.sparse_count}")

    @property
    def batch(self) -> int:
        return len(self.prompt_lens)

    @property
    def max_positions(self) -> int:
        return max(self.prompt_lens) + self.steps + 1

    @property
    def index_scale(self) -> float:
        return float(self.index_heads) ** -0.5 * float(self.head_dim) ** -0.5

    def describe(self) -> str:
        return (f"vocab {self.vocab}, hidden {self.hidden}, {self.layers} layers, {self.heads} heads x "
                f"{self.head_dim} (1 key/value head), indexer {self.index_heads} heads x {self.head_dim}, "
                f"ffn {self.ffn}, float32, seed {self.seed}")


def weights(cfg: Config) -> Dict[str, np.ndarray]:
    """Fixed-seed random float32 weights: ``embed``, ``pos_embed``, ``norm_f``, ``w_out`` and
    ``layer{i}.<name>`` for every name of :data:`LAYER_WEIGHTS`."""
    rng = np.random.default_rng(cfg.seed)

    def dense(fan_in: int, fan_out: int) -> np.ndarray:
        return (rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(np.float32)

    def norm(n: int) -> np.ndarray:
        return (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)

    h, hd = cfg.hidden, cfg.head_dim
    w: Dict[str, np.ndarray] = {
        "embed": rng.standard_normal((cfg.vocab, h)).astype(np.float32),
        "pos_embed": (0.5 * rng.standard_normal((cfg.max_positions, h))).astype(np.float32),
    }
    for i in range(cfg.layers):
        w.update({
            f"layer{i}.norm1": norm(h),
            f"layer{i}.wq": dense(h, cfg.heads * hd),
            f"layer{i}.wk": dense(h, hd),
            f"layer{i}.wv": dense(h, hd),
            f"layer{i}.wo": dense(cfg.heads * hd, h),
            f"layer{i}.wq_index": dense(h, cfg.index_heads * hd),
            f"layer{i}.w_index_weights": dense(h, cfg.index_heads),
            f"layer{i}.norm2": norm(h),
            f"layer{i}.w1": dense(h, cfg.ffn),
            f"layer{i}.w2": dense(cfg.ffn, h),
        })
    w["norm_f"] = norm(h)
    w["w_out"] = (3.0 * dense(h, cfg.vocab)).astype(np.float32)
    return w


@dataclass(frozen=True)
class Plan:
    """The batch and its paged cache, as an engine's scheduler would lay them out.

    Attributes
    ----------
    prompts : [B, max_prompt] int32, 0-padded prompt tokens.
    prompt_lens : [B] int32.
    block_tables : [B, max_blocks] int32: each sequence's physical blocks (a shuffled
        allocation, so logical and physical order differ); -1 past the blocks it uses.
    num_blocks : physical blocks of each layer's cache (a spare one is never handed out).
    prefill_slots : [B * max_prompt] int32: the cache slot of every prompt token, -1 for padding.
    """

    prompts: np.ndarray
    prompt_lens: np.ndarray
    block_tables: np.ndarray
    num_blocks: int
    prefill_slots: np.ndarray = field(repr=False)

    @property
    def max_prompt(self) -> int:
        return int(self.prompts.shape[1])


def plan(cfg: Config) -> Plan:
    """Prompts (fixed seed, ``seed + 1``) and a shuffled block allocation for ``cfg``."""
    rng = np.random.default_rng(cfg.seed + 1)
    b, bs = cfg.batch, cfg.block_size
    lens = np.array(cfg.prompt_lens, dtype=np.int32)
    prompts = np.zeros((b, int(lens.max())), dtype=np.int32)
    for i, n in enumerate(lens):
        prompts[i, :n] = rng.integers(1, cfg.vocab, n)
    # A sequence holds prompt + steps tokens; the last advance also computes the slot of one more.
    needed = [-(-(int(n) + cfg.steps + 1) // bs) for n in lens]
    max_blocks = max(needed)
    num_blocks = sum(needed) + 1
    physical = rng.permutation(num_blocks)[: sum(needed)]
    tables = np.full((b, max_blocks), -1, dtype=np.int32)
    start = 0
    for i, n in enumerate(needed):
        tables[i, :n] = physical[start:start + n]
        start += n
    slots = np.full((b, prompts.shape[1]), -1, dtype=np.int32)
    for i, n in enumerate(lens):
        pos = np.arange(n)
        slots[i, :n] = tables[i, pos // bs] * bs + pos % bs
    return Plan(prompts, lens, tables, num_blocks, slots.reshape(-1))


def engine_layers(cfg: Config, w: Dict[str, np.ndarray]) -> List[List[np.ndarray]]:
    """Every layer's weights in :data:`ENGINE_LAYER_WEIGHTS` order, as the engines run them: q, k,
    v, the index queries and the index weights come from one matmul with ``w_proj`` =
    [wq | wk | wv | wq_index | w_index_weights] (columns :func:`proj_split`); k and v are then
    strided views of its output, which reshape_and_cache takes as they are. (The NumPy reference
    keeps the five matrices apart.)"""
    layers = []
    for i in range(cfg.layers):
        p = f"layer{i}."
        proj = np.concatenate([w[p + n] for n in ("wq", "wk", "wv", "wq_index", "w_index_weights")], axis=1)
        layers.append([w[p + "norm1"], np.ascontiguousarray(proj), w[p + "wo"], w[p + "norm2"], w[p + "w1"],
                       w[p + "w2"]])
    return layers


def proj_split(cfg: Config) -> Tuple[int, int, int, int, int]:
    """Column offsets of q, k, v, index queries and index weights in ``w_proj``, then its width."""
    q = 0
    k = q + cfg.heads * cfg.head_dim
    v = k + cfg.head_dim
    iq = v + cfg.head_dim
    iw = iq + cfg.index_heads * cfg.head_dim
    return q, k, v, iq, iw
