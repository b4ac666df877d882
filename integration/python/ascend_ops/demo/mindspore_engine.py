"""The demo model on MindSpore (device_target CPU): PyNative and Graph mode.

One ``nn.Cell`` serves both modes. The caches are ``Parameter``s that reshape_and_cache updates in
place; the graph reads them after the write (the op's ``RW_WRITE`` signature and
``side_effect_mem`` order the write before the reads). PyNative: the Cell runs eagerly and the
ops are called through timer wrappers (which wait for MindSpore's queue, so each op's time is
its own). Graph mode: ``ms.jit`` of the Cell, with the ops' graph front doors
(``ascend_ops.reshape_and_cache.ms.PRIMITIVE``, ``ascend_ops.lightning_indexer.ms.lightning_indexer``
without sparse_values: a graph must not return the None); the decode step (every layer and the
greedy argmax) is one graph, compiled once and replayed, timed as a whole; the prefill has its
own shapes and is a second graph. advance_step_flashattn runs between steps, outside the graph,
on the same metadata tensors.
"""
from __future__ import annotations

from typing import Dict

import numpy as np

from .model import Config, Plan, engine_layers, proj_split
from .timing import GRAPH, Timer

__all__ = ["MindSporeEngine"]



def _modules():
    from ascend_ops.common.loader import load_native

    for package in ("reshape_and_cache", "lightning_indexer", "adv_step_flash"):
        load_native(f"ascend_ops.{package}", "mindspore")  # a clear error if an adapter is not built
    import mindspore as ms
    from mindspore import nn, ops

    from ascend_ops.adv_step_flash import ms as asf_ms
    from ascend_ops.lightning_indexer import ms as li_ms
    from ascend_ops.reshape_and_cache import ms as rac_ms

    return ms, nn, ops, rac_ms, li_ms, asf_ms


def _build_cell(cfg: Config, weights: Dict[str, np.ndarray], plan: Plan, rac, li):
    ms, nn, ops, _, _, _ = _modules()
    hd, bs, k_sel = cfg.head_dim, cfg.block_size, cfg.sparse_count
    scale, index_scale, eps = float(1.0 / np.sqrt(hd)), cfg.index_scale, cfg.eps
    oq, ok, ov, oiq, oiw = proj_split(cfg)

    def rms(x, g):
        return x * ops.rsqrt(ops.mean(x * x, -1, True) + eps) * g

    class Model(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            t = {k: ms.Tensor(v) for k, v in weights.items()}
            self.embed, self.pos_embed, self.norm_f, self.w_out = t["embed"], t["pos_embed"], t["norm_f"], t["w_out"]
            self.layers = tuple(tuple(ms.Tensor(a) for a in layer) for layer in engine_layers(cfg, weights))
            shape = (plan.num_blocks, bs, 1, hd)
            self.k_caches = ms.ParameterTuple(
                [ms.Parameter(ms.Tensor(np.zeros(shape, np.float32)), name=f"k_cache{i}", requires_grad=False)
                 for i in range(cfg.layers)])
            self.v_caches = ms.ParameterTuple(
                [ms.Parameter(ms.Tensor(np.zeros(shape, np.float32)), name=f"v_cache{i}", requires_grad=False)
                 for i in range(cfg.layers)])
            self.rac, self.li = rac, li

        def construct(self, tokens, positions, slots, lens_q, lens_k, rows, block_tables):
            """tokens / positions [B, S] int32, slots [B*S], lens_q / lens_k [B], rows [B] (the flat
            row of each sequence to sample), block_tables [B, max_blocks] -> next tokens [B]."""
            b, s = tokens.shape
            max_blocks = block_tables.shape[1]
            x = ops.gather(self.embed, tokens, 0) + ops.gather(self.pos_embed, positions, 0)
            for i in range(cfg.layers):
                norm1, w_proj, wo, norm2, w1, w2 = self.layers[i]
                k_cache, v_cache = self.k_caches[i], self.v_caches[i]
                h = rms(x, norm1)
                proj = ops.matmul(h, w_proj).reshape(b * s, -1)                   # [T, q | k | v | iq | iw]
                q = proj[:, oq:ok].reshape(b, s, cfg.heads, hd)
                k = proj[:, ok:ov].reshape(b * s, 1, hd)
                v = proj[:, ov:oiq].reshape(b * s, 1, hd)
                self.rac(k, v, k_cache, v_cache, slots)
                iq = proj[:, oiq:oiw].contiguous().reshape(b, s, cfg.index_heads, hd)
                iw = (proj[:, oiw:] * index_scale).reshape(b, s, cfg.index_heads)
                sel, _ = self.li(iq, k_cache, iw, lens_q, lens_k, block_tables, layout_query="BSND",
                                 layout_key="PA_BSND", sparse_count=k_sel, sparse_mode=3, return_value=False)
                sel = sel.reshape(b, s, k_sel)
                # gather the selected tokens' K/V through the block table (sel -1: nothing)
                valid = sel >= 0
                pos = ops.maximum(sel, 0)
                table = ops.broadcast_to(ops.expand_dims(block_tables, 1), (b, s, max_blocks))
                slot = ops.gather_elements(table, 2, pos // bs) * bs + pos % bs
                flat = slot.reshape(-1)
                keys = ops.gather(k_cache.reshape(-1, hd), flat, 0).reshape(b, s, k_sel, hd)
                values = ops.gather(v_cache.reshape(-1, hd), flat, 0).reshape(b, s, k_sel, hd)
                att = ops.matmul(q, keys.swapaxes(-1, -2)) * scale                 # [B, S, H, K]
                att = ops.masked_fill(att, ops.logical_not(ops.expand_dims(valid, 2)), -1e30)
                out = ops.matmul(ops.softmax(att, -1), values)                     # [B, S, H, hd]
                x = x + ops.matmul(out.reshape(b, s, cfg.heads * hd), wo)
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
                 timer: Timer) -> None:
        ms, _, _, rac_ms, li_ms, asf_ms = _modules()
        if ms.get_context("device_target") != "CPU":
            ms.set_context(device_target="CPU")
        self.ms, self.cfg, self.plan, self.timer = ms, cfg, plan, timer
        from mindspore.graph.api import _pynative_executor  # private, but the only CPU-capable wait

        timer.sync = _pynative_executor.sync
        if graph:
            rac, li = rac_ms.PRIMITIVE, li_ms.lightning_indexer
        else:
            rac = timer.wrap("reshape_and_cache", rac_ms.reshape_and_cache)
            li = timer.wrap("lightning_indexer", li_ms.lightning_indexer)
        self.net = _build_cell(cfg, weights, plan, rac, li)
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
