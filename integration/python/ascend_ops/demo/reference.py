"""The dense NumPy reference of the demo model: float64, no paging, no ops, no framework.

MLA computed as written, never absorbed: per head, keys ``c @ w_uk`` and values ``c @ w_uv`` from
the latent rows ``c``, plus the shared rope key columns. Each sequence keeps its latent, rope and
indexer key rows in plain growing arrays; the indexer's selection is
computed from its definition (score every visible key, keep the ``sparse_count`` best, ties
to the smaller position). It also measures how robust greedy agreement is: the smallest gap
between the best and the second-best logit, and the smallest gap between the last selected
and the first rejected indexer score, each relative to the row's scale.

With 8-bit caches (``scales`` given) the rows are stored as the ops store them and read back
dequantized: latent and rope rows ``clip(rint(x / s), -128, 127) * s`` with the static
per-channel scales, indexer keys the same with a scale per token ``float32(max|x| / 127)`` (1 for a
zero row), and the indexer queries (lightning_indexer_quant's int8 queries) with a scale per
token and head. It then also measures the smallest distance of a quotient ``x / s`` to a rounding
boundary (a half-integer), relative to ``max(1, |x / s|)``: where that is below the engines'
float32 rounding, an engine may store the neighbouring code.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .model import Config, Plan

__all__ = ["Result", "generate"]


@dataclass
class Result:
    """tokens: [B, steps + 1] int64; margins relative to the row's magnitude (max |value|)."""

    tokens: np.ndarray
    min_logit_margin: float
    min_index_gap: float
    selections: int        # indexer rows where more keys were visible than sparse_count
    zero_ties: int         # of those, rows whose boundary was an exact tie of zero scores
    cache_amax: List[Tuple[np.ndarray, np.ndarray]]  # per layer: largest |latent|, |rope| per channel cached
    min_code_margin: float = float("inf")  # 8-bit caches: smallest relative distance to a rounding boundary
    flipped: int = 0       # codes the sensitivity run (flip_below) moved to their other neighbour


class _Quantizer:
    """Stores cache rows as int8 codes and reads them back dequantized; records code margins.
    ``flip_below`` > 0: every code whose margin is below it takes its other neighbour (the
    sensitivity run: what an engine could store there, everywhere at once)."""

    def __init__(self, flip_below: float = 0.0) -> None:
        self.margins: List[float] = [float("inf")]
        self.flip_below = flip_below
        self.flipped = 0

    def __call__(self, x: np.ndarray, scale: np.ndarray) -> np.ndarray:
        y = x / scale
        codes = np.rint(y)
        margin = (0.5 - np.abs(y - codes)) / np.maximum(1.0, np.abs(y))
        inside = np.abs(y) < 127.5  # beyond: clipped, far from any boundary but the clip's
        if inside.any():
            self.margins.append(float(margin[inside].min()))
        flip = inside & (margin < self.flip_below) & (y != codes)
        self.flipped += int(flip.sum())
        codes = np.where(flip, codes + np.sign(y - codes), codes)
        return np.clip(codes, -128, 127) * scale

    def per_token(self, x: np.ndarray) -> np.ndarray:
        amax = np.abs(x).max(axis=-1, keepdims=True)
        scale = np.where(amax > 0, (amax / 127.0).astype(np.float32), np.float32(1)).astype(np.float64)
        return self(x, scale)


def _rms(x: np.ndarray, g: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * g


class _Sequence:
    def __init__(self, cfg: Config, w: Dict[str, np.ndarray],
                 scales: Optional[Sequence[Tuple[np.ndarray, np.ndarray]]], quantizer: _Quantizer) -> None:
        self.cfg, self.w = cfg, {k: v.astype(np.float64) for k, v in w.items()}
        self.scales = None if scales is None else [tuple(np.asarray(a, np.float64) for a in s) for s in scales]
        self.quantize = quantizer
        self.amax = [(np.zeros(cfg.latent), np.zeros(cfg.rope)) for _ in range(cfg.layers)]
        self.latents: List[np.ndarray] = [np.zeros((0, cfg.latent)) for _ in range(cfg.layers)]
        self.ropes: List[np.ndarray] = [np.zeros((0, cfg.rope)) for _ in range(cfg.layers)]
        self.index_keys: List[np.ndarray] = [np.zeros((0, cfg.index_dim)) for _ in range(cfg.layers)]
        self.index_gaps: List[float] = []
        self.zero_ties = 0

    def forward(self, tokens: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Run the new tokens (all after the cached ones); return their logits [n, vocab]."""
        cfg, w = self.cfg, self.w
        x = w["embed"][tokens] + w["pos_embed"][positions]
        n, nh = len(tokens), cfg.heads
        for i in range(cfg.layers):
            p = f"layer{i}."
            h = _rms(x, w[p + "norm1"], cfg.eps)
            q_nope = (h @ w[p + "wq_nope"]).reshape(n, nh, cfg.qk_nope)
            q_rope = (h @ w[p + "wq_rope"]).reshape(n, nh, cfg.rope)
            latent, rope, index_key = h @ w[p + "w_dkv"], h @ w[p + "w_kr"], h @ w[p + "wk_index"]
            self.amax[i] = (np.maximum(self.amax[i][0], np.abs(latent).max(axis=0)),
                            np.maximum(self.amax[i][1], np.abs(rope).max(axis=0)))
            if self.scales is not None:
                latent = self.quantize(latent, self.scales[i][0])
                rope = self.quantize(rope, self.scales[i][1])
                index_key = self.quantize.per_token(index_key)
            self.latents[i] = np.concatenate([self.latents[i], latent])
            self.ropes[i] = np.concatenate([self.ropes[i], rope])
            self.index_keys[i] = np.concatenate([self.index_keys[i], index_key])
            iq = (h @ w[p + "wq_index"]).reshape(n, cfg.index_heads, cfg.index_dim)
            if self.scales is not None:  # lightning_indexer_quant: int8 queries, a scale per token and head
                iq = self.quantize.per_token(iq)
            iw = (h @ w[p + "w_index_weights"]) * cfg.index_scale
            c, kr, ik = self.latents[i], self.ropes[i], self.index_keys[i]
            k_nope = (c @ w[p + "w_uk"]).reshape(len(c), nh, cfg.qk_nope)      # [L, heads, qk_nope]
            v = (c @ w[p + "w_uv"]).reshape(len(c), nh, cfg.v_dim)              # [L, heads, v_dim]
            out = np.empty((n, nh, cfg.v_dim))
            for r in range(n):
                visible = len(c) - n + r + 1            # causal: keys up to this token
                score = iw[r] @ np.maximum(iq[r] @ ik[:visible].T, 0.0)    # [visible]
                order = np.lexsort((np.arange(visible), -score))        # best first, ties to smaller j
                chosen = order[: cfg.sparse_count]
                if visible > cfg.sparse_count:
                    last, first_out = score[order[cfg.sparse_count - 1]], score[order[cfg.sparse_count]]
                    if last == first_out == 0.0:
                        # every ReLU input was negative for both keys: an exact tie that every
                        # implementation breaks the same way (the smaller position)
                        self.zero_ties += 1
                    else:
                        self.index_gaps.append((last - first_out) / max(np.abs(score).max(), 1e-30))
                att = (np.einsum("hd,khd->hk", q_nope[r], k_nope[chosen])
                       + q_rope[r] @ kr[chosen].T) * cfg.scale              # [heads, k]
                att = np.exp(att - att.max(axis=-1, keepdims=True))
                att /= att.sum(axis=-1, keepdims=True)
                out[r] = np.einsum("hk,khd->hd", att, v[chosen])
            x = x + out.reshape(n, -1) @ w[p + "wo"]
            h2 = _rms(x, w[p + "norm2"], cfg.eps)
            x = x + np.maximum(h2 @ w[p + "w1"], 0.0) @ w[p + "w2"]
        return _rms(x, w["norm_f"], cfg.eps) @ w["w_out"]


def _pick(logits: np.ndarray, margins: List[float]) -> int:
    top = np.argsort(-logits, kind="stable")[:2]
    margins.append((logits[top[0]] - logits[top[1]]) / max(np.abs(logits).max(), 1e-30))
    return int(top[0])


def generate(cfg: Config, w: Dict[str, np.ndarray], plan: Plan,
             scales: Optional[Sequence[Tuple[np.ndarray, np.ndarray]]] = None, *, flip_below: float = 0.0) -> Result:
    """Greedy tokens of every sequence: one from the prompt, then one per decode step. With
    ``scales`` (per layer: the latent's and the rope's float32 per-channel scales), the caches
    are 8-bit (see the module's docstring); ``flip_below``: see ``_Quantizer``."""
    tokens = np.zeros((cfg.batch, cfg.steps + 1), dtype=np.int64)
    margins: List[float] = []
    gaps: List[float] = []
    zero_ties = 0
    quantizer = _Quantizer(flip_below)
    amax = [(np.zeros(cfg.latent), np.zeros(cfg.rope)) for _ in range(cfg.layers)]
    for b in range(cfg.batch):
        seq = _Sequence(cfg, w, scales, quantizer)
        n = int(plan.prompt_lens[b])
        logits = seq.forward(plan.prompts[b, :n], np.arange(n))
        tokens[b, 0] = _pick(logits[-1], margins)
        for s in range(cfg.steps):
            logits = seq.forward(tokens[b, s:s + 1], np.array([n + s]))
            tokens[b, s + 1] = _pick(logits[-1], margins)
        gaps.extend(seq.index_gaps)
        zero_ties += seq.zero_ties
        amax = [(np.maximum(a[0], s_[0]), np.maximum(a[1], s_[1])) for a, s_ in zip(amax, seq.amax)]
    return Result(tokens, float(min(margins)), float(min(gaps)) if gaps else float("inf"), len(gaps) + zero_ties,
                  zero_ties, amax, min(quantizer.margins), quantizer.flipped)
