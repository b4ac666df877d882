"""lightning_indexer's npu path on the simulated Ascend runtime: per steady-state call, the
synchronisations, copies and allocations it makes and the host time it costs (./dev bench)."""
from __future__ import annotations

import numpy as np

from ascend_ops.devkit import ascend_sim, npu_sim_bench
from ascend_ops.common.loader import load_native

N1, D, BLOCK_SIZE, K = 8, 128, 64, 64


def rows(batches=(2,), seq_len=256) -> list:
    core = load_native("ascend_ops.lightning_indexer", "core")
    if not getattr(core, "HAS_NPU_SIM", False) or not ascend_sim.available():
        return []
    stream, out = ascend_sim.Stream(), []
    rng = np.random.default_rng(0)
    for b in batches:
        blocks = seq_len // BLOCK_SIZE
        dev = {
            "query": rng.standard_normal((b, 1, N1, D)).astype(np.float16),
            "key": rng.standard_normal((b * blocks, BLOCK_SIZE, 1, D)).astype(np.float16),
            "weights": rng.standard_normal((b, 1, N1)).astype(np.float16),
            "actual_seq_lengths_query": np.ones(b, np.int32),
            "actual_seq_lengths_key": np.full(b, seq_len, np.int32),
            "block_table": np.arange(b * blocks, dtype=np.int32).reshape(b, blocks),
        }
        dev = {n: ascend_sim.to_device(a) for n, a in dev.items()}
        idx, val = ascend_sim.empty((b, 1, 1, K), np.int32), ascend_sim.empty((b, 1, 1, K), np.float32)
        call = lambda: core.run_npu_sim(**{n: d.array for n, d in dev.items()}, sparse_indices=idx.array,  # noqa: E731
                                        sparse_values=val.array, stream=stream.handle, sparse_count=K)
        out.append(npu_sim_bench.npu_sim_row(f"decode B={b} S2={seq_len} N1={N1} K={K} float16", call, stream,
                                             calls=10))
    stream.destroy()
    return out
