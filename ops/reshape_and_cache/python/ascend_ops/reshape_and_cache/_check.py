"""Quick golden runs for `ascend-ops check`: every backend through every front door."""
from __future__ import annotations

from typing import List

import numpy as np

from ascend_ops.common.registry import CheckCase

from . import reference

# T=5 tokens (one padding) into 3 blocks of 4 slots, H=2, Dk=16, Dv=8: small, odd sizes.
_T, _H, _DK, _DV, _BLOCKS, _BLOCK_SIZE = 5, 2, 16, 8, 3, 4
_SLOTS = np.array([7, -1, 0, 11, 4], dtype=np.int64)


def _inputs(dtype=np.float16):
    rng = np.random.default_rng(0)
    key = rng.standard_normal((_T, _H, _DK)).astype(dtype)
    value = rng.standard_normal((_T, _H, _DV)).astype(dtype)
    key_cache = rng.standard_normal((_BLOCKS, _BLOCK_SIZE, _H, _DK)).astype(dtype)
    value_cache = rng.standard_normal((_BLOCKS, _BLOCK_SIZE, _H, _DV)).astype(dtype)
    return key, value, key_cache, value_cache, _SLOTS.copy()


def _expect(got_key_cache, got_value_cache, key, value, key_cache, value_cache, slots) -> None:
    want_key, want_value = reference.reshape_and_cache(key, value, key_cache, value_cache, slots)
    if not np.array_equal(np.asarray(got_key_cache), want_key):
        raise AssertionError("key_cache differs from the reference")
    if not np.array_equal(np.asarray(got_value_cache), want_value):
        raise AssertionError("value_cache differs from the reference")


def _numpy(backend: str):
    def run() -> None:
        from .api import reshape_and_cache

        key, value, key_cache, value_cache, slots = _inputs()
        out_k, out_v = key_cache.copy(), value_cache.copy()
        reshape_and_cache(key, value, out_k, out_v, slots, backend=backend)
        _expect(out_k, out_v, key, value, key_cache, value_cache, slots)
    return run


def _torch(compiled: bool, device: str = "cpu"):
    def run() -> None:
        from ascend_ops.common.loader import load_native

        load_native("ascend_ops.reshape_and_cache", "torch")  # a clear error if not built
        import torch

        if device == "npu":
            import torch_npu  # noqa: F401  (only reached where an Ascend device is present)
        from .torch_ops import reshape_and_cache

        key, value, key_cache, value_cache, slots = _inputs()
        tk = torch.from_numpy(key_cache.copy()).to(device)
        tv = torch.from_numpy(value_cache.copy()).to(device)
        fn = torch.compile(reshape_and_cache, fullgraph=True) if compiled else reshape_and_cache
        fn(*(torch.from_numpy(a).to(device) for a in (key, value)), tk, tv,
           torch.from_numpy(slots).to(device))
        _expect(tk.cpu().numpy(), tv.cpu().numpy(), key, value, key_cache, value_cache, slots)
    return run


def _mindspore(graph: bool):
    def run() -> None:
        from ascend_ops.common.loader import load_native

        load_native("ascend_ops.reshape_and_cache", "mindspore")
        import mindspore as ms

        from . import ms as ms_ops

        key, value, key_cache, value_cache, slots = _inputs()
        pk = ms.Parameter(ms.Tensor(key_cache.copy()), name="key_cache")
        pv = ms.Parameter(ms.Tensor(value_cache.copy()), name="value_cache")
        args = (ms.Tensor(key), ms.Tensor(value), pk, pv, ms.Tensor(slots))
        fn = ms.jit(ms_ops.reshape_and_cache) if graph else ms_ops.reshape_and_cache
        fn(*args)
        _expect(pk.asnumpy(), pv.asnumpy(), key, value, key_cache, value_cache, slots)
    return run


def cases() -> List[CheckCase]:
    return [
        CheckCase("cpu", "core", _numpy("cpu")),
        CheckCase("emu", "core", _numpy("emu")),
        CheckCase("cpu", "torch eager", _torch(compiled=False)),
        CheckCase("cpu", "torch compile", _torch(compiled=True)),
        CheckCase("cpu", "mindspore pynative", _mindspore(graph=False)),
        CheckCase("cpu", "mindspore graph", _mindspore(graph=True)),
        CheckCase("npu", "torch eager", _torch(compiled=False, device="npu")),
    ]
