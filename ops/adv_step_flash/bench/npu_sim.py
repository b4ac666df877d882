"""adv_step_flash's npu path on the simulated Ascend runtime: per steady-state call, the
synchronisations, copies and allocations it makes and the host time it costs (./dev bench)."""
from __future__ import annotations

import numpy as np

from ascend_ops.devkit import ascend_sim, npu_sim_bench
from ascend_ops.common.loader import load_native

BLOCK_SIZE, MAX_BLOCKS = 128, 64


def rows(seqs_list=(8, 256)) -> list:
    core = load_native("ascend_ops.adv_step_flash", "core")
    if not getattr(core, "HAS_NPU_SIM", False) or not ascend_sim.available():
        return []
    stream, out = ascend_sim.Stream(), []
    rng = np.random.default_rng(0)
    for seqs in seqs_list:
        dev = [ascend_sim.to_device(a) for a in (
            rng.integers(0, 1000, seqs).astype(np.int64), rng.integers(0, 1000, (seqs, 1)).astype(np.int64),
            np.zeros(seqs, np.int64), rng.integers(1, 4000, seqs).astype(np.int32), np.zeros(seqs, np.int64),
            rng.integers(0, 10000, (seqs, MAX_BLOCKS)).astype(np.int32))]
        # a long decode: seq_lens stay far below MAX_BLOCKS * BLOCK_SIZE for the calls timed
        call = lambda: core.run_npu_sim(seqs, seqs, BLOCK_SIZE, *(d.array for d in dev), stream=stream.handle)  # noqa: E731
        out.append(npu_sim_bench.npu_sim_row(f"num_seqs={seqs} (vLLM dtypes)", call, stream))
    stream.destroy()
    return out
