"""Quick golden runs for `ascend-ops check`: every backend through every front door built here."""
from __future__ import annotations

from typing import List

import numpy as np

from ascend_ops.common.registry import CheckCase, front_door_cases

from . import reference

# T = 6 tokens (one padding -1, one beyond T' = 5), D = 64, qbs = 32 (G = 2), 3 blocks of 4 slots.
_T, _D, _QBS, _BLOCKS, _BLOCK_SIZE = 6, 64, 32, 3, 4
_SLOTS = np.array([7, -1, 0, 11, 4], dtype=np.int64)

# (name, layout, scale dtype, scale_fmt): the fused forms run on the cpu backend only.
_FORMS = (("split int8 + float16 scales", "split", np.float16, None),
          ("split int8 + float32 scales", "split", np.float32, None),
          ("fused fp8", "fused", None, None),
          ("fused fp8 ue8m0", "fused", None, "ue8m0"))


def _forms(fused: bool):
    return [f for f in _FORMS if fused or f[1] == "split"]


def _detail(fused: bool) -> str:
    return "forms: " + ", ".join(f[0] for f in _forms(fused))


def _inputs(form):
    """k, k_cache, slot_mapping, k_scale_cache (fresh arrays) and the keywords of one form."""
    _, layout, scale_dtype, scale_fmt = form
    rng = np.random.default_rng(0)
    k = (rng.standard_normal((_T, _D)) * 3).astype(np.float16)
    k[2, :_QBS] = 0  # a zero group
    g = _D // _QBS
    if layout == "fused":
        cache = rng.integers(0, 256, (_BLOCKS, _BLOCK_SIZE, _D + 4 * g), dtype=np.uint8)
        scales = None
    else:
        cache = rng.integers(-128, 128, (_BLOCKS, _BLOCK_SIZE, 1, _D), dtype=np.int8)
        scales = rng.standard_normal((_BLOCKS, _BLOCK_SIZE, 1, g)).astype(scale_dtype)
    return k, cache, _SLOTS.copy(), scales, {"quant_block_size": _QBS, "scale_fmt": scale_fmt}


def _expect(got_cache, got_scales, k, cache, slots, scales, kwargs) -> None:
    want_cache, want_scales = reference.indexer_k_quant_and_cache(k, cache, slots, scales, **kwargs)
    if not np.array_equal(np.asarray(got_cache).view(np.uint8), want_cache.view(np.uint8)):
        raise AssertionError("k_cache differs from the reference")
    if want_scales is not None and not np.array_equal(np.asarray(got_scales), want_scales):
        raise AssertionError("k_scale_cache differs from the reference")


def _numpy(backend: str):
    def run() -> str:
        from .api import indexer_k_quant_and_cache

        fused = backend == "cpu"
        for form in _forms(fused):
            k, cache, slots, scales, kwargs = _inputs(form)
            out_cache, out_scales = cache.copy(), None if scales is None else scales.copy()
            indexer_k_quant_and_cache(k, out_cache, slots, k_scale_cache=out_scales, backend=backend, **kwargs)
            _expect(out_cache, out_scales, k, cache, slots, scales, kwargs)
        return _detail(fused)
    return run


def _torch(compiled: bool, device: str = "cpu"):
    def run() -> str:
        from ascend_ops.common.loader import load_native

        load_native("ascend_ops.indexer_k_quant_and_cache", "torch")  # a clear error if not built
        import torch

        if device == "npu":
            import torch_npu  # noqa: F401  (only reached where an Ascend device is present)
        from .torch_ops import indexer_k_quant_and_cache

        fused = device == "cpu"
        for form in _forms(fused):
            if compiled:
                torch.compiler.reset()  # each form compiles anew (Dynamo's recompile limit)
            fn = torch.compile(indexer_k_quant_and_cache, fullgraph=True) if compiled else indexer_k_quant_and_cache
            k, cache, slots, scales, kwargs = _inputs(form)
            tk, tc, ts = (torch.from_numpy(a.copy()).to(device) for a in (k, cache, slots))
            tsc = None if scales is None else torch.from_numpy(scales.copy()).to(device)
            fn(tk, tc, ts, k_scale_cache=tsc, **kwargs)
            _expect(tc.cpu().numpy(), None if tsc is None else tsc.cpu().numpy(), k, cache, slots, scales, kwargs)
        return _detail(fused)
    return run


def _mindspore(graph: bool):
    def run() -> str:
        from ascend_ops.common.loader import load_native

        load_native("ascend_ops.indexer_k_quant_and_cache", "mindspore")
        import mindspore as ms

        from . import ms as ms_ops

        for form in _FORMS:
            k, cache, slots, scales, kwargs = _inputs(form)
            pc = ms.Parameter(ms.Tensor(cache.copy()), name="k_cache")
            ps = None if scales is None else ms.Parameter(ms.Tensor(scales.copy()), name="k_scale_cache")
            qbs, fmt = kwargs["quant_block_size"], kwargs["scale_fmt"]
            if graph and ps is None:
                def fused_step(kk, kc, s):
                    return ms_ops.indexer_k_quant_and_cache(kk, kc, s, None, qbs, fmt)
                ms.jit(fused_step)(ms.Tensor(k), pc, ms.Tensor(slots))
            elif graph:
                def split_step(kk, kc, s, sc):
                    return ms_ops.indexer_k_quant_and_cache(kk, kc, s, sc, qbs, fmt)
                ms.jit(split_step)(ms.Tensor(k), pc, ms.Tensor(slots), ps)
            else:
                ms_ops.indexer_k_quant_and_cache(ms.Tensor(k), pc, ms.Tensor(slots), ps, qbs, fmt)
            _expect(pc.asnumpy(), None if ps is None else ps.asnumpy(), k, cache, slots, scales, kwargs)
        return _detail(True)
    return run


def cases() -> List[CheckCase]:
    return front_door_cases(_numpy, _torch, _mindspore)
