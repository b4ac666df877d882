"""The demo's model, batch and paged KV-cache layout: one place every engine reads.

A tiny DeepSeek-V3.2-style decoder (MLA attention with DSA sparse selection) with fixed-seed
random weights (nothing is downloaded):

    x      = embed[token] + pos_embed[position]
    layer  (x ``layers``):
        h       = rms_norm(x) * norm1
        c       = h @ w_dkv    -> [latent]               the MLA latent: one row per token
        kr      = h @ w_kr     -> [rope]                 the rope key columns, shared by the heads
        q_nope  = h @ wq_nope  -> [heads, qk_nope]       q_rope = h @ wq_rope -> [heads, rope]
        k_nope  = c @ w_uk     -> [heads, qk_nope]       v = c @ w_uv -> [heads, v_dim]
        ik      = h @ wk_index -> [index_dim]            iq = h @ wq_index -> [index_heads, index_dim]
        iw      = (h @ w_index_weights) * index_heads**-0.5 * index_dim**-0.5 -> [index_heads]
        sel     = top sparse_count of score[j] = sum_h iw[h] * relu(iq[h] . ik[j]) over the visible
                  keys j <= position (ties to the smaller j)
        attn[h] = softmax over sel of (q_nope[h] . k_nope[j, h] + q_rope[h] . kr[j]) * scale,
                  times v[sel, h];  scale = (qk_nope + rope)**-0.5
        x       = x + concat_h(attn[h]) @ wo
        x       = x + relu(rms_norm(x) * norm2 @ w1) @ w2
    logits = rms_norm(x) * norm_f @ w_out;  next token = argmax (greedy)

The NumPy reference (:mod:`.reference`) computes exactly this, densely. The engines run it as
an inference engine on Ascend does, with the weights absorbed (:func:`engine_layers`): per
layer the latent cache (width ``latent``) and the rope cache (width ``rope``) are written by
one ``reshape_and_cache`` (latent as key, rope as value), the indexer's key cache by a key-only
``reshape_and_cache``; ``lightning_indexer`` selects over the indexer keys;
``sparse_flash_attention`` attends with the absorbed queries ``q_nope[h] @ w_uk[h]^T`` over the
latent (key = value = the latent cache) and ``q_rope`` over the rope cache; the output
projection reads the attention's latent-width output (``w_uv`` absorbed into ``wo``).
Everything is float32 in the engines (the NumPy reference is float64): every framework then
agrees with the reference as long as the greedy margins and the indexer's top-k boundary gaps
are far above float32 rounding, which the reference measures and the demo prints.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Tuple

import numpy as np

__all__ = ["Config", "Plan", "weights", "plan", "engine_layers", "kv_scales", "LAYER_WEIGHTS", "ENGINE_LAYER_WEIGHTS",
           "KV_CACHE_DTYPES"]

#: The demo's cache formats. "auto": float32 caches. "int8": the latent and rope caches in int8 with
#: static per-channel scales (reshape_and_cache's int8 mode, calibrated on the float model), the
#: indexer keys in int8 with a float32 scale per token (indexer_k_quant_and_cache, Ascend's split
#: layout). The indexer is then lightning_indexer_quant: it reads the int8 index cache and its
#: scales as they are, with the indexer queries quantized per token and head (amax / 127);
#: sparse_flash_attention reads float caches, so the engines dequantize the latent and rope caches
#: for it (``(q - 0) * scale``) until its 8-bit reader lands.
KV_CACHE_DTYPES = ("auto", "int8")

#: Per-layer weight names of :func:`weights`.
LAYER_WEIGHTS = ("norm1", "wq_nope", "wq_rope", "w_dkv", "w_kr", "w_uk", "w_uv", "wo", "wq_index", "wk_index",
                 "w_index_weights", "norm2", "w1", "w2")
#: Per-layer weights of the engines (:func:`engine_layers`): one fused input projection (queries
#: absorbed into the latent), the output projection from the latent width.
ENGINE_LAYER_WEIGHTS = ("norm1", "w_proj", "wo_latent", "norm2", "w1", "w2")


@dataclass(frozen=True)
class Config:
    """Model, batch and cache sizes. Defaults finish all four modes in well under a minute."""

    vocab: int = 96
    hidden: int = 64
    layers: int = 2
    heads: int = 4              # attention query heads; one latent key/value head (MLA)
    latent: int = 32            # D of sparse_flash_attention: the latent cache's width (key = value)
    rope: int = 8               # Dr: the rope cache's width
    qk_nope: int = 16           # per-head query/key width before absorption into the latent
    v_dim: int = 16             # per-head value width before absorption into the output projection
    index_heads: int = 4        # the indexer's N1
    index_dim: int = 16         # the indexer's D: its own key cache's width
    ffn: int = 128
    block_size: int = 8
    sparse_count: int = 16      # top-k of the indexer: smaller than most contexts, so it selects
    prompt_lens: Tuple[int, ...] = (5, 11, 17, 26)
    steps: int = 24             # decode steps: each sequence yields steps + 1 tokens
    seed: int = 15             # greedy margins >= 2.0e-3, indexer boundary gaps >= 1.7e-4 (relative)
    eps: float = 1e-6
    kv_cache_dtype: str = "auto"  # "int8": 8-bit caches (see KV_CACHE_DTYPES)

    def __post_init__(self) -> None:
        if self.steps < 1:
            raise ValueError(f"demo: steps should be >= 1, got {self.steps}")
        if not self.prompt_lens or min(self.prompt_lens) < 1:
            raise ValueError(f"demo: prompt lengths should be >= 1, got {self.prompt_lens}")
        if not 1 <= self.sparse_count <= 8192:
            raise ValueError(f"demo: sparse_count should be in [1, 8192], got {self.sparse_count}")
        if self.kv_cache_dtype not in KV_CACHE_DTYPES:
            raise ValueError(f"demo: kv_cache_dtype should be one of {KV_CACHE_DTYPES}, got {self.kv_cache_dtype!r}")

    @property
    def batch(self) -> int:
        return len(self.prompt_lens)

    @property
    def max_positions(self) -> int:
        return max(self.prompt_lens) + self.steps + 1

    @property
    def index_scale(self) -> float:
        return float(self.index_heads) ** -0.5 * float(self.index_dim) ** -0.5

    @property
    def scale(self) -> float:
        """The attention's softmax scale (a Python float: sparse_flash_attention's scale_value)."""
        return float(self.qk_nope + self.rope) ** -0.5

    def describe(self) -> str:
        return (f"vocab {self.vocab}, hidden {self.hidden}, {self.layers} layers, MLA: {self.heads} heads "
                f"(nope {self.qk_nope} + rope {self.rope}, v {self.v_dim}) over a {self.latent}-wide latent + "
                f"{self.rope}-wide rope cache, indexer {self.index_heads} heads x {self.index_dim}, "
                f"ffn {self.ffn}, float32, seed {self.seed}"
                + (", int8 caches (latent and rope: static per-channel scales; indexer keys: a dynamic scale per token)"
                   if self.quantized else ""))

    @property
    def quantized(self) -> bool:
        return self.kv_cache_dtype == "int8"


def weights(cfg: Config) -> Dict[str, np.ndarray]:
    """Fixed-seed random float32 weights: ``embed``, ``pos_embed``, ``norm_f``, ``w_out`` and
    ``layer{i}.<name>`` for every name of :data:`LAYER_WEIGHTS`."""
    rng = np.random.default_rng(cfg.seed)

    def dense(fan_in: int, fan_out: int) -> np.ndarray:
        return (rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(np.float32)

    def norm(n: int) -> np.ndarray:
        return (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)

    h = cfg.hidden
    w: Dict[str, np.ndarray] = {
        "embed": rng.standard_normal((cfg.vocab, h)).astype(np.float32),
        "pos_embed": (0.5 * rng.standard_normal((cfg.max_positions, h))).astype(np.float32),
    }
    for i in range(cfg.layers):
        w.update({
            f"layer{i}.norm1": norm(h),
            f"layer{i}.wq_nope": dense(h, cfg.heads * cfg.qk_nope),
            f"layer{i}.wq_rope": dense(h, cfg.heads * cfg.rope),
            f"layer{i}.w_dkv": dense(h, cfg.latent),
            f"layer{i}.w_kr": dense(h, cfg.rope),
            f"layer{i}.w_uk": dense(cfg.latent, cfg.heads * cfg.qk_nope),
            f"layer{i}.w_uv": dense(cfg.latent, cfg.heads * cfg.v_dim),
            f"layer{i}.wo": dense(cfg.heads * cfg.v_dim, h),
            f"layer{i}.wq_index": dense(h, cfg.index_heads * cfg.index_dim),
            f"layer{i}.wk_index": dense(h, cfg.index_dim),
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
    """Every layer's weights in :data:`ENGINE_LAYER_WEIGHTS` order, as the engines run them (MLA
    weight absorption, computed in float64, stored as float32):

    - ``w_proj`` = [wq_latent | wq_rope | w_dkv | w_kr | wq_index | wk_index | w_index_weights]
      (columns :func:`proj_split`), one matmul for every projection of the layer's input, where
      head h's block of ``wq_latent`` is ``wq_nope[:, h] @ w_uk[:, h]^T`` (hidden -> latent): the
      absorbed query scores the latent directly, ``q_latent . c = q_nope . (c @ w_uk)``;
    - ``wo_latent`` [heads * latent, hidden]: head h's rows are ``w_uv[:, h] @ wo[h]``, so the
      attention's latent-width output (softmax-weighted latent rows) is projected at once.

    The latent, rope and indexer key rows written to the caches are then strided views of the
    projection's output, which reshape_and_cache takes as they are. (The NumPy reference keeps
    every matrix apart and never absorbs.)"""
    layers = []
    for i in range(cfg.layers):
        p = f"layer{i}."
        f64 = {n: w[p + n].astype(np.float64) for n in ("wq_nope", "w_uk", "w_uv", "wo")}
        wq_latent = np.concatenate(
            [f64["wq_nope"][:, hh * cfg.qk_nope:(hh + 1) * cfg.qk_nope]
             @ f64["w_uk"][:, hh * cfg.qk_nope:(hh + 1) * cfg.qk_nope].T for hh in range(cfg.heads)], axis=1)
        wo_latent = np.concatenate(
            [f64["w_uv"][:, hh * cfg.v_dim:(hh + 1) * cfg.v_dim] @ f64["wo"][hh * cfg.v_dim:(hh + 1) * cfg.v_dim]
             for hh in range(cfg.heads)], axis=0)
        proj = np.concatenate([wq_latent.astype(np.float32)]
                              + [w[p + n] for n in ("wq_rope", "w_dkv", "w_kr", "wq_index", "wk_index",
                                                    "w_index_weights")], axis=1)
        layers.append([w[p + "norm1"], np.ascontiguousarray(proj), wo_latent.astype(np.float32), w[p + "norm2"],
                       w[p + "w1"], w[p + "w2"]])
    return layers


def proj_split(cfg: Config) -> Tuple[int, int, int, int, int, int, int, int]:
    """Column offsets in ``w_proj`` of the absorbed queries (heads x latent), the query rope
    columns (heads x rope), the latent, the key rope columns, the index queries, the index key,
    the index weights; then its width."""
    q_lat = 0
    q_rope = q_lat + cfg.heads * cfg.latent
    latent = q_rope + cfg.heads * cfg.rope
    k_rope = latent + cfg.latent
    iq = k_rope + cfg.rope
    ik = iq + cfg.index_heads * cfg.index_dim
    iw = ik + cfg.index_dim
    return q_lat, q_rope, latent, k_rope, iq, ik, iw, iw + cfg.index_heads


def kv_scales(cfg: Config, cache_amax: List[Tuple[np.ndarray, np.ndarray]]) -> List[Tuple[np.ndarray, np.ndarray]]:
    """The static int8 scales of every layer's latent and rope caches: float32 ``amax / 127`` per
    channel (1 where a channel was always 0), from the largest magnitudes a calibration run cached
    (``reference.Result.cache_amax`` of the float model): a checkpoint's calibrated C8 scales."""
    del cfg
    return [tuple(np.where(a > 0, a / 127.0, 1.0).astype(np.float32) for a in layer) for layer in cache_amax]
