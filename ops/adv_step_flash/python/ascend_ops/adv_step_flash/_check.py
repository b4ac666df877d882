"""Quick golden runs for `ascend-ops check`: every backend through every front door."""
from __future__ import annotations

from typing import Dict, List

import numpy as np

from ascend_ops.common.registry import CheckCase, front_door_cases

from . import reference

# 7 sequences (2 padding rows), block_size 16, a strided 5-wide table, vLLM's dtypes.
_NUM_SEQS, _NUM_QUERIES, _BLOCK_SIZE, _WIDTH = 7, 5, 16, 5
_NAMES = ("input_tokens", "sampled_token_ids", "input_positions", "seq_lens", "slot_mapping", "block_tables")
_OUTPUTS = ("input_tokens", "input_positions", "seq_lens", "slot_mapping")


def _inputs() -> Dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    tables = rng.integers(0, 1000, (_NUM_SEQS, _WIDTH + 3)).astype(np.int32)[:, 1:_WIDTH + 1]
    return {
        "input_tokens": np.full(_NUM_SEQS, 9, np.int64),
        "sampled_token_ids": rng.integers(0, 32000, (_NUM_QUERIES, 1)).astype(np.int64),
        "input_positions": np.full(_NUM_SEQS, 9, np.int64),
        "seq_lens": rng.integers(0, _WIDTH * _BLOCK_SIZE, _NUM_SEQS).astype(np.int32),
        "slot_mapping": np.full(_NUM_SEQS, 9, np.int64),
        "block_tables": tables,
    }


def _args(arrays):
    return (_NUM_SEQS, _NUM_QUERIES, _BLOCK_SIZE, *(arrays[n] for n in _NAMES))


def _expect(got: Dict[str, np.ndarray], arrays: Dict[str, np.ndarray]) -> None:
    want = reference.advance_step_flashattn(*_args(arrays))
    for name in _OUTPUTS:
        if not np.array_equal(np.asarray(got[name]), want[name]):
            raise AssertionError(f"{name} differs from the reference")


def _numpy(backend: str):
    def run() -> None:
        from .api import advance_step_flashattn

        arrays = _inputs()
        outs = {n: arrays[n].copy() for n in _NAMES}
        advance_step_flashattn(*_args(outs), backend=backend)
        _expect(outs, arrays)
    return run


def _torch(compiled: bool, device: str = "cpu"):
    def run() -> None:
        from ascend_ops.common.loader import load_native

        load_native("ascend_ops.adv_step_flash", "torch")  # a clear error if not built
        import torch

        if device == "npu":
            import torch_npu  # noqa: F401  (only reached where an Ascend device is present)
        from .torch_ops import advance_step_flashattn

        arrays = _inputs()
        tensors = {n: torch.from_numpy(arrays[n].copy()).to(device) for n in _NAMES}
        fn = torch.compile(advance_step_flashattn, fullgraph=True) if compiled else advance_step_flashattn
        fn(_NUM_SEQS, _NUM_QUERIES, _BLOCK_SIZE, *(tensors[n] for n in _NAMES))
        _expect({n: t.cpu().numpy() for n, t in tensors.items()}, arrays)
    return run


def _mindspore(graph: bool):
    def run() -> None:
        from ascend_ops.common.loader import load_native

        load_native("ascend_ops.adv_step_flash", "mindspore")
        import mindspore as ms

        from . import ms as ms_ops

        arrays = _inputs()
        arrays["block_tables"] = np.ascontiguousarray(arrays["block_tables"])
        tensors = {n: ms.Parameter(ms.Tensor(arrays[n].copy()), name=n) if n in _OUTPUTS else ms.Tensor(arrays[n])
                   for n in _NAMES}
        fn = ms.jit(ms_ops.advance_step_flashattn) if graph else ms_ops.advance_step_flashattn
        fn(_NUM_SEQS, _NUM_QUERIES, _BLOCK_SIZE, *(tensors[n] for n in _NAMES))
        _expect({n: t.asnumpy() for n, t in tensors.items()}, arrays)
    return run


def cases() -> List[CheckCase]:
    return front_door_cases(_numpy, _torch, _mindspore)
