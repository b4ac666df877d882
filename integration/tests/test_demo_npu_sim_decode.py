"""The demo's decode step (ascend_ops.demo) on the NPU host path, on the simulated Ascend
runtime, at the NPU's sizes (D = 512 latent, Dr = 64 rope, indexer D = 128, float16):
adv_step_flash advances the batch (tokens, positions, lengths, slots), reshape_and_cache writes
the step's latent and rope rows (latent as key, rope as value) and, key-only, its indexer key
rows at those slots, lightning_indexer ranks the cached indexer keys for the step's queries,
sparse_flash_attention attends over the selected latent + rope rows (value = key = the latent
cache). Captured once into a graph (no synchronisation, copy or allocation while capturing)
and replayed 10 times, it must leave exactly the state 10 eager steps leave."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_ops.common.loader import load_native

sim = pytest.importorskip("ascend_ops.devkit.ascend_sim")
OPS = ("adv_step_flash", "reshape_and_cache", "lightning_indexer", "sparse_flash_attention")
cores = {op: load_native(f"ascend_ops.{op}", "core") for op in OPS}
pytestmark = pytest.mark.skipif(not all(getattr(c, "HAS_NPU_SIM", False) for c in cores.values()),
                                reason="built without AOP_WITH_NPU_SIM (./dev builds it)")
B, BLOCK, NUM_BLOCKS, MAX_BLOCKS, D, N1, K, STEPS = 4, 16, 16, 4, 128, 8, 16, 10
LATENT, ROPE, HEADS = 512, 64, 16     # sparse_flash_attention at the NPU's widths
SCALE = (128 + ROPE) ** -0.5         # a Python float, as engines pass it


def initial_state(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    seq_lens = rng.integers(1, 24, B).astype(np.int32)
    return {
        # adv_step_flash (vLLM's dtypes)
        "input_tokens": rng.integers(0, 1000, B).astype(np.int64),
        "sampled_token_ids": rng.integers(0, 1000, (B, 1)).astype(np.int64),
        "input_positions": (seq_lens - 1).astype(np.int64),
        "seq_lens": seq_lens,
        "slot_mapping": np.zeros(B, np.int64),
        "block_tables": rng.permutation(NUM_BLOCKS)[: B * MAX_BLOCKS].reshape(B, MAX_BLOCKS).astype(np.int32),
        # reshape_and_cache: the step's rows and the paged caches (H = 1): latent + rope, then the
        # indexer's keys (key-only)
        "latent": rng.standard_normal((B, 1, LATENT)).astype(np.float16),
        "rope": rng.standard_normal((B, 1, ROPE)).astype(np.float16),
        "latent_cache": rng.standard_normal((NUM_BLOCKS, BLOCK, 1, LATENT)).astype(np.float16),
        "rope_cache": rng.standard_normal((NUM_BLOCKS, BLOCK, 1, ROPE)).astype(np.float16),
        "index_key": rng.standard_normal((B, 1, D)).astype(np.float16),
        "index_cache": rng.standard_normal((NUM_BLOCKS, BLOCK, 1, D)).astype(np.float16),
        # lightning_indexer: one query row per sequence
        "query": rng.standard_normal((B, 1, N1, D)).astype(np.float16),
        "weights": rng.standard_normal((B, 1, N1)).astype(np.float16),
        "lengths_q": np.ones(B, np.int32),
        "sparse_indices": np.zeros((B, 1, 1, K), np.int32),
        "sparse_values": np.zeros((B, 1, 1, K), np.float32),
        # sparse_flash_attention: absorbed queries over the latent, rope queries over the rope cache
        "q_latent": (0.05 * rng.standard_normal((B, 1, HEADS, LATENT))).astype(np.float16),
        "q_rope": (0.05 * rng.standard_normal((B, 1, HEADS, ROPE))).astype(np.float16),
        "attention_out": np.zeros((B, 1, HEADS, LATENT), np.float16),
    }


def step(dev: dict, stream) -> None:
    """One decode step: five op calls queued on `stream`, nothing waited for."""
    cores["adv_step_flash"].run_npu_sim(
        B, B, BLOCK, dev["input_tokens"].array, dev["sampled_token_ids"].array, dev["input_positions"].array,
        dev["seq_lens"].array, dev["slot_mapping"].array, dev["block_tables"].array, stream=stream.handle)
    cores["reshape_and_cache"].run_npu_sim(
        dev["latent"].array, dev["rope"].array, dev["latent_cache"].array, dev["rope_cache"].array,
        dev["slot_mapping"].array, stream=stream.handle)
    cores["reshape_and_cache"].run_npu_sim(
        dev["index_key"].array, None, dev["index_cache"].array, None, dev["slot_mapping"].array, stream=stream.handle)
    cores["lightning_indexer"].run_npu_sim(
        query=dev["query"].array, key=dev["index_cache"].array, weights=dev["weights"].array,
        actual_seq_lengths_query=dev["lengths_q"].array, actual_seq_lengths_key=dev["seq_lens"].array,
        block_table=dev["block_tables"].array, sparse_indices=dev["sparse_indices"].array,
        sparse_values=dev["sparse_values"].array, stream=stream.handle, layout_query="BSND",
        layout_key="PA_BSND", sparse_count=K, sparse_mode=3)
    cores["sparse_flash_attention"].run_npu_sim(
        query=dev["q_latent"].array, key=dev["latent_cache"].array, value=dev["latent_cache"].array,
        sparse_indices=dev["sparse_indices"].array, scale_value=SCALE, block_table=dev["block_tables"].array,
        actual_seq_lengths_query=dev["lengths_q"].array, actual_seq_lengths_kv=dev["seq_lens"].array,
        query_rope=dev["q_rope"].array, key_rope=dev["rope_cache"].array, attention_out=dev["attention_out"].array,
        stream=stream.handle, layout_query="BSND", layout_kv="PA_BSND", sparse_mode=3)


def to_device(state: dict) -> dict:
    return {name: sim.to_device(a) for name, a in state.items()}


def to_host(dev: dict) -> dict:
    return {name: d.numpy() for name, d in dev.items()}


def test_captured_decode_step_replayed_10_times_equals_eager():
    stream = sim.Stream()
    eager = to_device(initial_state())
    for _ in range(STEPS):
        step(eager, stream)
    stream.synchronize()
    want = to_host(eager)

    graphed = to_device(initial_state())
    before = sim.counters()
    with sim.capture(stream) as graph:
        step(graphed, stream)
    captured = sim.counters() - before
    assert captured.capture_violations == 0
    assert (captured.synchronizations, captured.allocations, captured.h2d_copies, captured.launches) == (0, 0, 0, 0)
    stream.synchronize()
    np.testing.assert_array_equal(graphed["seq_lens"].numpy(), initial_state()["seq_lens"])  # not run yet

    before = sim.counters()
    for _ in range(STEPS):
        graph[0].replay(stream)
    replays = sim.counters() - before
    assert replays.launches == len(OPS) * STEPS + STEPS  # reshape_and_cache twice a step
    assert (replays.synchronizations, replays.allocations, replays.h2d_copies, replays.d2h_copies) == (0, 0, 0, 0)
    stream.synchronize()
    got = to_host(graphed)
    for name in want:
        np.testing.assert_array_equal(got[name].view(np.uint8), want[name].view(np.uint8), err_msg=name)
    assert (got["seq_lens"] == initial_state()["seq_lens"] + STEPS).all()  # the state did advance
    assert np.abs(got["attention_out"].astype(np.float32)).max() > 0  # the attention ran
    graph[0].destroy()
    stream.destroy()
