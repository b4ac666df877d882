"""Quick golden runs for `ascend-ops check`: every backend through every front door."""
from __future__ import annotations

from typing import List

import numpy as np

from ascend_ops.common.registry import CheckCase, front_door_cases

from . import reference

# T=5 tokens (one padding) into 3 blocks of 4 slots, H=2, Dk=16, Dv=8: small, odd sizes.
_T, _H, _DK, _DV, _BLOCKS, _BLOCK_SIZE = 5, 2, 16, 8, 3, 4
_SLOTS = np.array([7, -1, 0, 11, 4], dtype=np.int64)


# The call forms every case runs: (name, key-only, cache_mode, head_num given as [T, H*D],
# kv_cache_dtype).
_FORMS = (("kv", False, 0, False, "auto"), ("key-only", True, 0, False, "auto"), ("NZ kv", False, 1, False, "auto"),
          ("NZ key-only [T, H*D] + head_num", True, 1, True, "auto"),
          ("int8 kv (per-channel / per-head scales, offset)", False, 0, False, "int8"),
          ("NZ int8 kv", False, 1, False, "int8"), ("fp8_e4m3 kv", False, 0, False, "fp8_e4m3"))
_DETAIL = "forms: " + ", ".join(f[0] for f in _FORMS)
# fp8 modes run on the CPU only (Atlas A2 / A3 have no fp8): the emu / npu cases leave them out.
_NPU_FORMS = tuple(f for f in _FORMS if not f[4].startswith("fp8"))
_NPU_DETAIL = "forms: " + ", ".join(f[0] for f in _NPU_FORMS)
_QUANT_KEYS = ("k_scale", "v_scale", "k_offset")


def _forms(backend: str):
    return (_FORMS, _DETAIL) if backend == "cpu" else (_NPU_FORMS, _NPU_DETAIL)


def _inputs(form, dtype=np.float16):
    """(args, kwargs) of one form: NumPy arrays, caches as fresh copies."""
    _, key_only, cache_mode, flat, kv_cache_dtype = form
    rng = np.random.default_rng(0)
    key = rng.standard_normal((_T, _H, _DK)).astype(dtype)
    value = rng.standard_normal((_T, _H, _DV)).astype(dtype)
    cache_dtype = {"auto": dtype, "int8": np.int8}.get(kv_cache_dtype, np.uint8)
    key_cache = rng.integers(-100, 100, (_BLOCKS, _BLOCK_SIZE, _H, _DK)).astype(cache_dtype)
    value_cache = rng.integers(-100, 100, (_BLOCKS, _BLOCK_SIZE, _H, _DV)).astype(cache_dtype)
    if cache_mode:  # Dv = 8 is not a whole fractal: widen value to the fractal width for NZ
        width = reference.nz_fractal(cache_dtype) // _DV
        value = np.concatenate([value] * width, 2)
        value_cache = np.concatenate([value_cache] * width, 3)
        key = np.concatenate([key] * (reference.nz_fractal(cache_dtype) // _DK), 2) if cache_dtype != dtype else key
        key_cache = np.concatenate([key_cache] * (key.shape[2] // _DK), 3)
        key_cache, value_cache = reference.nd_to_nz(key_cache), reference.nd_to_nz(value_cache)
    if key_only:
        value = value_cache = None
    dk = key.shape[2]
    kwargs = {"cache_mode": cache_mode}
    if flat:
        key = key.reshape(_T, -1)
        value = None if value is None else value.reshape(_T, -1)
        kwargs["head_num"] = _H
    if kv_cache_dtype != "auto":
        kwargs["kv_cache_dtype"] = kv_cache_dtype
        kwargs["k_scale"] = (rng.random(_H * dk) * 0.02 + 0.01).astype(np.float32)           # per channel
        kwargs["v_scale"] = (rng.random(_H) * 0.02 + 0.01).astype(np.float32)                   # per head
        if kv_cache_dtype == "int8":
            kwargs["k_offset"] = rng.integers(-4, 5, 1).astype(np.float32)                      # per tensor
    return [key, value, key_cache, value_cache, _SLOTS.copy()], kwargs


def _expect(got_key_cache, got_value_cache, args, kwargs) -> None:
    want_key, want_value = reference.reshape_and_cache(*args, **kwargs)
    if not np.array_equal(np.asarray(got_key_cache), want_key):
        raise AssertionError("key_cache differs from the reference")
    if want_value is not None and not np.array_equal(np.asarray(got_value_cache), want_value):
        raise AssertionError("value_cache differs from the reference")


def _numpy(backend: str):
    def run() -> str:
        from .api import reshape_and_cache

        forms, detail = _forms(backend)
        for form in forms:
            args, kwargs = _inputs(form)
            out = [None if a is None else a.copy() for a in args[2:4]]
            reshape_and_cache(args[0], args[1], out[0], out[1], args[4], **kwargs, backend=backend)
            _expect(out[0], out[1], args, kwargs)
        return detail
    return run


def _torch(compiled: bool, device: str = "cpu"):
    def run() -> str:
        from ascend_ops.common.loader import load_native

        load_native("ascend_ops.reshape_and_cache", "torch")  # a clear error if not built
        import torch

        if device == "npu":
            import torch_npu  # noqa: F401  (only reached where an Ascend device is present)
        from .torch_ops import reshape_and_cache

        forms, detail = _forms("npu" if device == "npu" else "cpu")
        for form in forms:
            if compiled:
                # Each form compiles anew; without the reset, the forms of repeated checks in one
                # process exceed Dynamo's recompile limit for this function (a fullgraph failure).
                torch.compiler.reset()
            fn = torch.compile(reshape_and_cache, fullgraph=True) if compiled else reshape_and_cache
            args, kwargs = _inputs(form)
            t = [None if a is None else torch.from_numpy(a.copy()).to(device) for a in args]
            fn(*t, **{k: torch.from_numpy(v).to(device) if k in _QUANT_KEYS else v for k, v in kwargs.items()})
            _expect(t[2].cpu().numpy(), None if t[3] is None else t[3].cpu().numpy(), args, kwargs)
        return detail
    return run


def _mindspore(graph: bool):
    def run() -> str:
        from ascend_ops.common.loader import load_native

        load_native("ascend_ops.reshape_and_cache", "mindspore")
        import mindspore as ms

        from . import ms as ms_ops

        for form in _FORMS:
            args, kwargs = _inputs(form)
            pk = ms.Parameter(ms.Tensor(args[2].copy()), name="key_cache")
            pv = None if args[3] is None else ms.Parameter(ms.Tensor(args[3].copy()), name="value_cache")
            key, value, slots = ms.Tensor(args[0]), None if args[1] is None else ms.Tensor(args[1]), ms.Tensor(args[4])
            cache_mode, head_num = kwargs["cache_mode"], kwargs.get("head_num")
            quant = {k: ms.Tensor(v) if k in _QUANT_KEYS else v for k, v in kwargs.items()
                     if k not in ("cache_mode", "head_num")}  # graph constants
            if graph and value is None:
                def key_only_step(k, kc, s):
                    return ms_ops.reshape_and_cache(k, None, kc, None, s, cache_mode, head_num, **quant)
                ms.jit(key_only_step)(key, pk, slots)
            elif graph:
                def step(k, v, kc, vc, s):
                    return ms_ops.reshape_and_cache(k, v, kc, vc, s, cache_mode, head_num, **quant)
                ms.jit(step)(key, value, pk, pv, slots)
            else:
                ms_ops.reshape_and_cache(key, value, pk, pv, slots, cache_mode, head_num, **quant)
            _expect(pk.asnumpy(), None if pv is None else pv.asnumpy(), args, kwargs)
        return _DETAIL
    return run


def cases() -> List[CheckCase]:
    return front_door_cases(_numpy, _torch, _mindspore)
