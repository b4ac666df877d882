"""The dense NumPy reference of the demo model: float64, no paging, no ops, no framework.

MLA computed as written, never absorbed: per head, keys ``c @ w_uk`` and values ``c @ w_uv`` from
the latent rows ``c``, plus the shared rope key columns. Each sequence keeps its latent, rope and
indexer key rows in plain growing arrays; the indexer's selection is
computed from its definition (score every visible key, keep the ``sparse_count`` best, ties
to the smaller position). It also measures how robust greedy agreement is: the smallest gap
between the best and the second-best logit, and the smallest gap between the last selected
and the first rejected indexer score, each relative to the row's scale.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List

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


def _rms(x: np.ndarray, g: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * g


class _Sequence:
    def __init__(self, cfg: Config, w: Dict[str, np.ndarray]) -> None:
        self.cfg, self.w = cfg, {k: v.astype(np.float64) for k, v in w.items()}
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
            self.latents[i] = np.concatenate([self.latents[i], h @ w[p + "w_dkv"]])
            self.ropes[i] = np.concatenate([self.ropes[i], h @ w[p + "w_kr"]])
            self.index_keys[i] = np.concatenate([self.index_keys[i], h @ w[p + "wk_index"]])
            iq = (h @ w[p + "wq_index"]).reshape(n, cfg.index_heads, cfg.index_dim)
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


def generate(cfg: Config, w: Dict[str, np.ndarray], plan: Plan) -> Result:
    """Greedy tokens of every sequence: one from the prompt, then one per decode step."""
    tokens = np.zeros((cfg.batch, cfg.steps + 1), dtype=np.int64)
    margins: List[float] = []
    gaps: List[float] = []
    zero_ties = 0
    for b in range(cfg.batch):
        seq = _Sequence(cfg, w)
        n = int(plan.prompt_lens[b])
        logits = seq.forward(plan.prompts[b, :n], np.arange(n))
        tokens[b, 0] = _pick(logits[-1], margins)
        for s in range(cfg.steps):
            logits = seq.forward(tokens[b, s:s + 1], np.array([n + s]))
            tokens[b, s + 1] = _pick(logits[-1], margins)
        gaps.extend(seq.index_gaps)
        zero_ties += seq.zero_ties
    return Result(tokens, float(min(margins)), float(min(gaps)) if gaps else float("inf"), len(gaps) + zero_ties,
                  zero_ties)
