"""indexer_k_quant_and_cache's npu path on the simulated Ascend runtime: per steady-state call, the
synchronisations, copies and allocations it makes and the host time it costs (./dev bench)."""
from __future__ import annotations

import numpy as np

from ascend_ops.devkit import ascend_sim, npu_sim_bench
from ascend_ops.common.loader import load_native

D, BLOCK_SIZE = 128, 64


def rows(tokens_list=(1, 64)) -> list:
    core = load_native("ascend_ops.indexer_k_quant_and_cache", "core")
    if not getattr(core, "HAS_NPU_SIM", False) or not ascend_sim.available():
        return []
    stream, out = ascend_sim.Stream(), []
    rng = np.random.default_rng(0)
    for tokens in tokens_list:
        blocks = max(1, 2 * tokens // BLOCK_SIZE + 1)
        dev = [ascend_sim.to_device(a) for a in (
            rng.standard_normal((tokens, D)).astype(np.float16), np.zeros((blocks, BLOCK_SIZE, 1, D), np.int8),
            rng.permutation(blocks * BLOCK_SIZE)[:tokens].astype(np.int32),
            np.zeros((blocks, BLOCK_SIZE, 1, 1), np.float16))]
        call = lambda: core.run_npu_sim(dev[0].array, dev[1].array, dev[2].array,  # noqa: E731
                                        k_scale_cache=dev[3].array, stream=stream.handle)
        out.append(npu_sim_bench.npu_sim_row(f"T={tokens} D={D} float16 -> int8 + float16", call, stream))
    stream.destroy()
    return out
