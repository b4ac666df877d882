"""The demo model on PyTorch: eager and ``torch.compile``.

One forward function serves both modes. The ops are ``torch.ops.ascend_ops.*`` (their schemas
carry the alias annotations ``torch.compile`` needs to keep the in-place cache writes). Eager:
reshape_and_cache, lightning_indexer and sparse_flash_attention are wrapped by the timer.
With int8 caches (``cfg.kv_cache_dtype``) reshape_and_cache quantizes the latent and rope rows
on write and indexer_k_quant_and_cache the indexer keys; lightning_indexer_quant reads the int8
index cache with queries quantized per token and head, sparse_flash_attention dequantized copies.
Compiled: the decode step's forward (every layer's reshape_and_cache calls, lightning_indexer,
sparse_flash_attention, MLP and the greedy argmax) is one ``fullgraph`` graph, compiled once and
replayed every step, timed as a whole (sparse_flash_attention's scale_value is a Python float
constant of the graph); advance_step_flashattn runs after it, outside the graph. The prefill
runs once, eagerly (a second graph would double the compile time for one call).
"""
from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np

from .model import Config, Plan, engine_layers, proj_split
from .timing import GRAPH, Timer

__all__ = ["TorchEngine"]



def _rms(x, g, eps: float):
    import torch

    return x * torch.rsqrt(torch.mean(x * x, dim=-1, keepdim=True) + eps) * g


def _write_caches(cfg: Config, ops, latent, k_rope, index_key, slots, caches, scales):
    """Write one layer's new rows; return the (latent, rope, index key) caches the readers take:
    the caches themselves, or with int8 caches the latent and rope caches' dequantized float32
    copies (sparse_flash_attention reads float caches) and the int8 index cache with its scale
    cache (lightning_indexer_quant reads them as they are)."""
    rac, ikq = ops
    if not cfg.quantized:
        latent_cache, rope_cache, index_cache = caches
        rac(latent, k_rope, latent_cache, rope_cache, slots)     # latent as key, rope as value (Dk != Dv)
        rac(index_key, None, index_cache, None, slots)           # key-only
        return caches
    latent_cache, rope_cache, index_cache, index_scales = caches
    latent_scale, rope_scale = scales
    rac(latent, k_rope, latent_cache, rope_cache, slots, kv_cache_dtype="int8", k_scale=latent_scale,
        v_scale=rope_scale)
    ikq(index_key.flatten(1), index_cache, slots, k_scale_cache=index_scales, quant_block_size=cfg.index_dim)
    return latent_cache.float() * latent_scale, rope_cache.float() * rope_scale, (index_cache, index_scales)


def _quantize_query(iq):
    """int8 codes and float32 scales per token and head (symmetric: amax / 127, 1 for a zero row),
    the reference's quantizer: codes rint(x / scale) clipped to [-128, 127]."""
    import torch

    amax = iq.abs().amax(dim=-1)
    scale = torch.where(amax > 0, amax / 127.0, torch.ones_like(amax))
    codes = torch.clamp(torch.round(iq / scale.unsqueeze(-1)), -128, 127).to(torch.int8)
    return codes, scale


def _forward(cfg: Config, w: Dict, layers: List, scales: List, writers, li, sfa, tokens, positions, slots, lens_q,
             lens_k, last, block_tables, caches):
    """Run new tokens [B, S] at positions [B, S]; write their cache rows at slots [B*S]; return
    the greedy next token of row ``last[b]`` of every sequence ([B] int64). ``caches[i]`` is layer
    i's (latent, rope, index key) caches, with int8 caches also the index keys' scale cache;
    ``scales[i]`` the latent's and the rope's static scales (int8 caches)."""
    import torch

    b, s = tokens.shape
    o_q, o_qr, o_c, o_kr, o_iq, o_ik, o_iw, _ = proj_split(cfg)
    x = w["embed"][tokens.long()] + w["pos_embed"][positions.long()]
    for i, (norm1, w_proj, wo_latent, norm2, w1, w2) in enumerate(layers):
        h = _rms(x, norm1, cfg.eps)
        proj = (h @ w_proj).reshape(b * s, -1)       # [T, q_latent | q_rope | latent | k_rope | iq | ik | iw]
        latent = proj[:, o_c:o_kr].unflatten(1, (1, cfg.latent))   # strided views: rows of proj
        k_rope = proj[:, o_kr:o_iq].unflatten(1, (1, cfg.rope))
        index_key = proj[:, o_ik:o_iw].unflatten(1, (1, cfg.index_dim))
        latent_cache, rope_cache, index_cache = _write_caches(cfg, writers, latent, k_rope, index_key, slots,
                                                              caches[i], scales[i] if scales else None)
        iq = proj[:, o_iq:o_ik].reshape(b, s, cfg.index_heads, cfg.index_dim).contiguous()
        iw = (proj[:, o_iw:] * cfg.index_scale).reshape(b, s, cfg.index_heads)
        geometry = dict(actual_seq_lengths_query=lens_q, actual_seq_lengths_key=lens_k, block_table=block_tables,
                        layout_query="BSND", layout_key="PA_BSND", sparse_count=cfg.sparse_count, sparse_mode=3)
        if cfg.quantized:  # int8 queries against the int8 index cache and its scales
            codes, q_scale = _quantize_query(iq)
            sel, _ = li(codes, index_cache[0], iw, q_scale, index_cache[1], **geometry)
        else:
            sel, _ = li(iq, index_cache, iw, **geometry)
        q_latent = proj[:, o_q:o_qr].reshape(b, s, cfg.heads, cfg.latent).contiguous()
        q_rope = proj[:, o_qr:o_c].reshape(b, s, cfg.heads, cfg.rope).contiguous()
        out, _, _ = sfa(q_latent, latent_cache, latent_cache, sel, cfg.scale, block_table=block_tables,
                        actual_seq_lengths_query=lens_q, actual_seq_lengths_kv=lens_k, query_rope=q_rope,
                        key_rope=rope_cache, layout_query="BSND", layout_kv="PA_BSND", sparse_mode=3)
        x = x + out.reshape(b, s, -1) @ wo_latent                  # from the latent width
        x = x + torch.relu(_rms(x, norm2, cfg.eps) @ w1) @ w2
    x = x[torch.arange(b), last]
    logits = _rms(x, w["norm_f"], cfg.eps) @ w["w_out"]
    return torch.argmax(logits, dim=-1)


class TorchEngine:
    """Prefill and greedy decode of the demo batch with PyTorch tensors on CPU.

    Parameters
    ----------
    cfg, weights, plan : from :mod:`.model`.
    compiled : bool
        ``torch.compile(fullgraph=True, dynamic=False)`` the decode step (the prefill runs eager).
    timer : Timer
    backend : str
        The ``torch.compile`` backend: ``"inductor"`` (the default of torch) or ``"aot_eager"``
        (the same tracing and functionalization of the in-place ops, no code generation).
    """

    def __init__(self, cfg: Config, weights: Dict[str, np.ndarray], plan: Plan, *, compiled: bool,
                 timer: Timer, backend: str = "inductor", scales: Optional[List] = None) -> None:
        from ascend_ops.common.loader import load_native

        packages = ["reshape_and_cache", "lightning_indexer", "sparse_flash_attention", "adv_step_flash"]
        for package in packages + (["indexer_k_quant_and_cache", "lightning_indexer_quant"] if cfg.quantized else []):
            load_native(f"ascend_ops.{package}", "torch")  # registers torch.ops.ascend_ops.<op>
        import torch

        self.torch, self.cfg, self.plan, self.timer = torch, cfg, plan, timer
        ops = torch.ops.ascend_ops
        li_name = "lightning_indexer_quant" if cfg.quantized else "lightning_indexer"
        rac, li, sfa = ops.reshape_and_cache, getattr(ops, li_name), ops.sparse_flash_attention
        ikq = ops.indexer_k_quant_and_cache if cfg.quantized else None
        if not compiled:
            rac, li = timer.wrap("reshape_and_cache", rac), timer.wrap(li_name, li)
            sfa = timer.wrap("sparse_flash_attention", sfa)
            if ikq is not None:
                ikq = timer.wrap("indexer_k_quant_and_cache", ikq)
        self.advance = timer.wrap("adv_step_flash", ops.advance_step_flashattn)
        self.w = {k: torch.from_numpy(v) for k, v in weights.items()}
        layers = [[torch.from_numpy(a) for a in layer] for layer in engine_layers(cfg, weights)]
        layer_scales = [tuple(torch.from_numpy(a) for a in pair) for pair in scales] if cfg.quantized else None
        self.caches = [self._layer_caches(torch, cfg, plan) for _ in range(cfg.layers)]
        b = cfg.batch
        self.block_tables = torch.from_numpy(plan.block_tables.copy())
        self.seq_lens = torch.from_numpy(plan.prompt_lens.copy())        # tokens already cached
        self.input_tokens = torch.zeros(b, dtype=torch.int32)
        self.input_positions = torch.zeros(b, dtype=torch.int32)
        self.slot_mapping = torch.zeros(b, dtype=torch.int32)
        self._zeros = torch.zeros(b, dtype=torch.int64)

        def forward(*args):
            return _forward(cfg, self.w, layers, layer_scales, (rac, ikq), li, sfa, *args)

        def eager_forward(*args):
            return _forward(cfg, self.w, layers, layer_scales,
                            (ops.reshape_and_cache, ops.indexer_k_quant_and_cache if cfg.quantized else None),
                            getattr(ops, li_name), ops.sparse_flash_attention, *args)

        self.prefill_forward = eager_forward if compiled else forward
        self.decode_forward = forward
        if compiled:
            compiled_forward = torch.compile(forward, fullgraph=True, dynamic=False, backend=backend)
            self.decode_forward = timer.wrap(GRAPH, compiled_forward)

    @staticmethod
    def _layer_caches(torch, cfg: Config, plan: Plan) -> tuple:
        """One layer's caches [num_blocks, block_size, 1, width]: latent, rope, index key; int8
        caches also the index keys' float32 scales [num_blocks, block_size, 1, 1]."""
        dtype = torch.int8 if cfg.quantized else torch.float32
        caches = tuple(torch.zeros(plan.num_blocks, cfg.block_size, 1, width, dtype=dtype)
                       for width in (cfg.latent, cfg.rope, cfg.index_dim))
        return caches + ((torch.zeros(plan.num_blocks, cfg.block_size, 1, 1),) if cfg.quantized else ())

    def _advance(self, sampled) -> np.ndarray:
        b = self.cfg.batch
        self.advance(b, b, self.cfg.block_size, self.input_tokens, sampled, self.input_positions, self.seq_lens,
                     self.slot_mapping, self.block_tables)
        return sampled.numpy().astype(np.int64)

    def prefill(self) -> np.ndarray:
        """Write every prompt's K/V, return each sequence's first token [B]."""
        torch, p = self.torch, self.plan
        b, s = p.prompts.shape
        lens = torch.from_numpy(p.prompt_lens.copy())
        sampled = self.prefill_forward(torch.from_numpy(p.prompts), torch.arange(s, dtype=torch.int32).expand(b, s),
                               torch.from_numpy(p.prefill_slots), lens, lens, (lens - 1).long(),
                               self.block_tables, self.caches)
        return self._advance(sampled)

    def step(self) -> np.ndarray:
        """One decode step of every sequence; return the sampled tokens [B]."""
        sampled = self.decode_forward(self.input_tokens[:, None], self.input_positions[:, None], self.slot_mapping, None,
                               self.seq_lens, self._zeros, self.block_tables, self.caches)
        return self._advance(sampled)
