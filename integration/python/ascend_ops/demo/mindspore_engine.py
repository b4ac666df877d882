"""The demo model on MindSpore (device_target CPU): PyNative and Graph mode.

One ``nn.Cell`` serves both modes. The caches are ``Parameter``s that reshape_and_cache updates in
place; the graph reads them after the write (the op's ``RW_WRITE`` signature and
``side_effect_mem`` order the write before the reads). PyNative: the Cell runs eagerly and the
ops are called through timer wrappers (which wait for MindSpore's queue, so each op's time is
its own). Graph mode: ``ms.jit`` of the Cell, with the ops' graph front doors
(``ascend_ops.reshape_and_cache.ms.reshape_and_cache``, ``ascend_ops.lightning_indexer.ms.lightning_indexer``
without sparse_values: a graph must not return the None,
``ascend_ops.sparse_flash_attention.ms.sparse_flash_attention``); the decode step (every layer and
the greedy argmax) is one graph, compiled once and replayed, timed as a whole; the prefill has
its own shapes and is a second graph. sparse_flash_attention's scale_value is computed in Python
when the Cell is built and enters the graph as a constant (MindSpore would round float
arithmetic inside ``construct`` to float32). advance_step_flashattn runs between steps, outside
the graph, on the same metadata tensors.
"""
from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np

from .model import Config, Plan, engine_layers, proj_split
from .timing import GRAPH, Timer

__all__ = ["MindSporeEngine"]



def _modules():
    from ascend_ops.common.loader import load_native

    for package in ("reshape_and_cache", "lightning_indexer", "sparse_flash_attention", "adv_step_flash"):
        load_native(f"ascend_ops.{package}", "mindspore")  # a clear error if an adapter is not built
    import mindspore as ms
    from mindspore import nn, ops

    from ascend_ops.adv_step_flash import ms as asf_ms
    from ascend_ops.lightning_indexer import ms as li_ms
    from ascend_ops.reshape_and_cache import ms as rac_ms
    from ascend_ops.sparse_flash_attention import ms as sfa_ms

    return ms, nn, ops, rac_ms, li_ms, sfa_ms, asf_ms


def _ikq_module():
    """indexer_k_quant_and_cache's MindSpore front door (int8 caches only)."""
    from ascend_ops.common.loader import load_native

    load_native("ascend_ops.indexer_k_quant_and_cache", "mindspore")
    from ascend_ops.indexer_k_quant_and_cache import ms as ikq_ms

    return ikq_ms


def _liq_module():
    """lightning_indexer_quant's MindSpore front door (int8 caches only)."""
    from ascend_ops.common.loader import load_native

    load_native("ascend_ops.lightning_indexer_quant", "mindspore")
    from ascend_ops.lightning_indexer_quant import ms as liq_ms

    return liq_ms


def _build_cell(cfg: Config, weights: Dict[str, np.ndarray], plan: Plan, rac, li, sfa, ikq=None,
                scales: Optional[List] = None):
    ms, nn, ops, _, _, _, _ = _modules()
    k_sel = cfg.sparse_count
    scale, index_scale, eps = cfg.scale, cfg.index_scale, cfg.eps     # Python floats: graph constants
    o_q, o_qr, o_c, o_kr, o_iq, o_ik, o_iw, _ = proj_split(cfg)

    def rms(x, g):
        return x * ops.rsqrt(ops.mean(x * x, -1, True) + eps) * g

    class Model(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            t = {k: ms.Tensor(v) for k, v in weights.items()}
            self.embed, self.pos_embed, self.norm_f, self.w_out = t["embed"], t["pos_embed"], t["norm_f"], t["w_out"]
            self.layers = tuple(tuple(ms.Tensor(a) for a in layer) for layer in engine_layers(cfg, weights))
            cache_dtype = np.int8 if cfg.quantized else np.float32

            def caches(name, width, dtype=cache_dtype):
                shape = (plan.num_blocks, cfg.block_size, 1, width)
                return ms.ParameterTuple(
                    [ms.Parameter(ms.Tensor(np.zeros(shape, dtype)), name=f"{name}{i}", requires_grad=False)
                     for i in range(cfg.layers)])

            self.latent_caches = caches("latent_cache", cfg.latent)
            self.rope_caches = caches("rope_cache", cfg.rope)
            self.index_caches = caches("index_cache", cfg.index_dim)
            if cfg.quantized:  # the index keys' float32 scale per token; the static latent / rope scales
                self.index_scales = caches("index_scale", 1, np.float32)
                self.scales = tuple(tuple(ms.Tensor(a) for a in pair) for pair in scales)
            self.rac, self.li, self.sfa, self.ikq = rac, li, sfa, ikq

        def write_caches(self, i, latent, k_rope, index_key, slots):
            """Write layer i's new rows; return the caches the readers take (int8 caches: the
            latent and rope caches' dequantized float32 copies, since sparse_flash_attention reads
            float caches; the int8 index cache and its scales, which lightning_indexer_quant reads)."""
            latent_cache, rope_cache, index_cache = self.latent_caches[i], self.rope_caches[i], self.index_caches[i]
            if not cfg.quantized:
                self.rac(latent, k_rope, latent_cache, rope_cache, slots)     # latent as key, rope as value
                self.rac(index_key, None, index_cache, None, slots)            # key-only
                return latent_cache, rope_cache, index_cache
            latent_scale, rope_scale = self.scales[i]
            index_scales = self.index_scales[i]
            self.rac(latent, k_rope, latent_cache, rope_cache, slots, kv_cache_dtype="int8", k_scale=latent_scale,
                     v_scale=rope_scale)
            self.ikq(index_key.reshape(-1, cfg.index_dim), index_cache, slots, k_scale_cache=index_scales,
                     quant_block_size=cfg.index_dim)
            return (ops.cast(latent_cache, ms.float32) * latent_scale, ops.cast(rope_cache, ms.float32) * rope_scale,
                    (index_cache, index_scales))

        def construct(self, tokens, positions, slots, lens_q, lens_k, rows, block_tables):
            """tokens / positions [B, S] int32, slots [B*S], lens_q / lens_k [B], rows [B] (the flat
            row of each sequence to sample), block_tables [B, max_blocks] -> next tokens [B]."""
            b, s = tokens.shape
            x = ops.gather(self.embed, tokens, 0) + ops.gather(self.pos_embed, positions, 0)
            for i in range(cfg.layers):
                norm1, w_proj, wo_latent, norm2, w1, w2 = self.layers[i]
                h = rms(x, norm1)
                proj = ops.matmul(h, w_proj).reshape(b * s, -1)   # [T, q_latent | q_rope | latent | k_rope | iq | ik | iw]
                latent = proj[:, o_c:o_kr].reshape(b * s, 1, cfg.latent)
                k_rope = proj[:, o_kr:o_iq].reshape(b * s, 1, cfg.rope)
                index_key = proj[:, o_ik:o_iw].reshape(b * s, 1, cfg.index_dim)
                latent_cache, rope_cache, index_cache = self.write_caches(i, latent, k_rope, index_key, slots)
                iq = proj[:, o_iq:o_ik].contiguous().reshape(b, s, cfg.index_heads, cfg.index_dim)
                iw = (proj[:, o_iw:] * index_scale).reshape(b, s, cfg.index_heads)
                if cfg.quantized:  # int8 queries (amax / 127 per token and head) on the int8 index cache
                    amax = ops.amax(ops.abs(iq), -1)
                    q_scale = ops.select(amax > 0, amax / 127.0, ops.ones_like(amax))
                    codes = ops.cast(ops.clip_by_value(ops.round(iq / q_scale.expand_dims(-1)), -128.0, 127.0),
                                     ms.int8)
                    sel, _ = self.li(codes, index_cache[0], iw, q_scale, index_cache[1], lens_q, lens_k,
                                     block_tables, layout_query="BSND", layout_key="PA_BSND", sparse_count=k_sel,
                                     sparse_mode=3, return_value=False)
                else:
                    sel, _ = self.li(iq, index_cache, iw, lens_q, lens_k, block_tables, layout_query="BSND",
                                     layout_key="PA_BSND", sparse_count=k_sel, sparse_mode=3, return_value=False)
                q_latent = proj[:, o_q:o_qr].contiguous().reshape(b, s, cfg.heads, cfg.latent)
                q_rope = proj[:, o_qr:o_c].contiguous().reshape(b, s, cfg.heads, cfg.rope)
                out, _, _ = self.sfa(q_latent, latent_cache, latent_cache, sel, scale, block_table=block_tables,
                                     actual_seq_lengths_query=lens_q, actual_seq_lengths_kv=lens_k,
                                     query_rope=q_rope, key_rope=rope_cache, layout_query="BSND",
                                     layout_kv="PA_BSND", sparse_mode=3)
                x = x + ops.matmul(out.reshape(b, s, cfg.heads * cfg.latent), wo_latent)   # from the latent width
                x = x + ops.matmul(ops.relu(ops.matmul(rms(x, norm2), w1)), w2)
            x = ops.gather(x.reshape(b * s, cfg.hidden), rows, 0)
            logits = ops.matmul(rms(x, self.norm_f), self.w_out)
            return ops.argmax(logits, -1).astype(ms.int32)

    return Model()


class MindSporeEngine:
    """Prefill and greedy decode of the demo batch with MindSpore tensors (device_target CPU).

    Parameters
    ----------
    cfg, weights, plan : from :mod:`.model`.
    graph : bool
        ``ms.jit`` the Cell (Graph mode) instead of running it eagerly (PyNative).
    timer : Timer
        Its ``sync`` is set here to wait for MindSpore's PyNative queue
        (``mindspore.runtime.synchronize`` is Ascend / GPU only: on CPU it logs an error and
        returns at once, so the PyNative executor's own ``sync`` is used).
    """

    def __init__(self, cfg: Config, weights: Dict[str, np.ndarray], plan: Plan, *, graph: bool,
                 timer: Timer, scales: Optional[List] = None) -> None:
        ms, _, _, rac_ms, li_ms, sfa_ms, asf_ms = _modules()
        if ms.get_context("device_target") != "CPU":
            ms.set_context(device_target="CPU")
        self.ms, self.cfg, self.plan, self.timer = ms, cfg, plan, timer
        from mindspore.graph.api import _pynative_executor  # private, but the only CPU-capable wait

        timer.sync = _pynative_executor.sync
        rac, li, sfa = rac_ms.reshape_and_cache, li_ms.lightning_indexer, sfa_ms.sparse_flash_attention
        ikq = _ikq_module().indexer_k_quant_and_cache if cfg.quantized else None
        if cfg.quantized:
            li = _liq_module().lightning_indexer_quant
        if not graph:
            rac = timer.wrap("reshape_and_cache", rac)
            li = timer.wrap("lightning_indexer_quant" if cfg.quantized else "lightning_indexer", li)
            sfa = timer.wrap("sparse_flash_attention", sfa)
            if ikq is not None:
                ikq = timer.wrap("indexer_k_quant_and_cache", ikq)
        self.net = _build_cell(cfg, weights, plan, rac, li, sfa, ikq, scales)
        self.forward = timer.wrap(GRAPH, ms.jit(self.net)) if graph else self.net
        self.advance = timer.wrap("adv_step_flash", asf_ms.advance_step_flashattn)
        b = cfg.batch
        self.block_tables = ms.Tensor(plan.block_tables.copy())
        self.seq_lens = ms.Tensor(plan.prompt_lens.copy())                  # tokens already cached
        self.input_tokens = ms.Tensor(np.zeros(b, np.int32))
        self.input_positions = ms.Tensor(np.zeros(b, np.int32))
        self.slot_mapping = ms.Tensor(np.zeros(b, np.int32))
        self._ones = ms.Tensor(np.ones(b, np.int32))
        self._rows = ms.Tensor(np.arange(b, dtype=np.int32))

    def _advance(self, sampled) -> np.ndarray:
        b = self.cfg.batch
        self.advance(b, b, self.cfg.block_size, self.input_tokens, sampled, self.input_positions, self.seq_lens,
                     self.slot_mapping, self.block_tables)
        return sampled.asnumpy().astype(np.int64)

    def prefill(self) -> np.ndarray:
        """Write every prompt's K/V, return each sequence's first token [B]."""
        ms, p = self.ms, self.plan
        b, s = p.prompts.shape
        lens = p.prompt_lens
        rows = (np.arange(b) * s + lens - 1).astype(np.int32)
        positions = np.broadcast_to(np.arange(s, dtype=np.int32), (b, s)).copy()
        sampled = self.forward(ms.Tensor(p.prompts), ms.Tensor(positions), ms.Tensor(p.prefill_slots),
                               ms.Tensor(lens), ms.Tensor(lens), ms.Tensor(rows), self.block_tables)
        return self._advance(sampled)

    def step(self) -> np.ndarray:
        """One decode step of every sequence; return the sampled tokens [B]."""
        b = self.cfg.batch
        sampled = self.forward(self.input_tokens.reshape(b, 1), self.input_positions.reshape(b, 1),
                               self.slot_mapping, self._ones, self.seq_lens, self._rows, self.block_tables)
        return self._advance(sampled)
