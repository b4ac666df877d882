"""reshape_and_cache's npu path on the simulated Ascend runtime: per steady-state call, the
synchronisations, copies and allocations it makes and the host time it costs (./dev bench)."""
from __future__ import annotations

import numpy as np

from ascend_ops.devkit import ascend_sim, npu_sim_bench
from ascend_ops.common.loader import load_native

H, D, BLOCK_SIZE = 8, 128, 128


def rows(tokens_list=(1, 64)) -> list:
    core = load_native("ascend_ops.reshape_and_cache", "core")
    if not getattr(core, "HAS_NPU_SIM", False) or not ascend_sim.available():
        return []
    stream, out = ascend_sim.Stream(), []
    rng = np.random.default_rng(0)
    for tokens in tokens_list:
        blocks = max(1, 2 * tokens // BLOCK_SIZE + 1)
        dev = [ascend_sim.to_device(a) for a in (
            rng.standard_normal((tokens, H, D)).astype(np.float16), rng.standard_normal((tokens, H, D)).astype(np.float16),
            np.zeros((blocks, BLOCK_SIZE, H, D), np.float16), np.zeros((blocks, BLOCK_SIZE, H, D), np.float16),
            rng.permutation(blocks * BLOCK_SIZE)[:tokens].astype(np.int32))]
        call = lambda: core.run_npu_sim(*(d.array for d in dev), stream=stream.handle)  # noqa: E731
        out.append(npu_sim_bench.npu_sim_row(f"T={tokens} H={H} D={D} float16", call, stream))
        # kv_cache_dtype "int8": per-channel scales and offsets, device tensors like the rest
        quant = [ascend_sim.to_device(a) for a in (
            np.zeros((blocks, BLOCK_SIZE, H, D), np.int8), np.zeros((blocks, BLOCK_SIZE, H, D), np.int8),
            np.full((H * D,), 0.02, np.float32), np.full((H * D,), 0.03, np.float32), np.zeros((H * D,), np.float32))]
        call_q = lambda: core.run_npu_sim(dev[0].array, dev[1].array, quant[0].array, quant[1].array,  # noqa: E731
                                          dev[4].array, kv_cache_dtype="int8", k_scale=quant[2].array,
                                          v_scale=quant[3].array, k_offset=quant[4].array, stream=stream.handle)
        out.append(npu_sim_bench.npu_sim_row(f"T={tokens} H={H} D={D} float16 -> int8", call_q, stream))
    stream.destroy()
    return out
