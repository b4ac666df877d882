"""The slot patterns of bench/copy_rate.py (issue 34's conditions): "decode" is what an engine's
decode steps write, "fresh" a new random set every call, "same" one set; all inside the caches."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

BENCH = Path(__file__).resolve().parent.parent / "bench" / "copy_rate.py"


@pytest.fixture(scope="module")
def copy_rate():
    spec = importlib.util.spec_from_file_location("rac_copy_rate", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def slots_in_range(mod, s):
    valid = s[s >= 0]
    assert valid.numel() == len(set(valid.tolist())), "a set writes a slot twice"
    assert int(valid.min()) >= 0 and int(valid.max()) < mod.NUM_BLOCKS * mod.BLOCK_SIZE


@pytest.mark.parametrize("tokens", [1, 16, 64])
def test_decode_steps_write_each_sequence_next_position(copy_rate, tokens):
    mod = copy_rate
    sets = mod.slot_sets(tokens, "decode")
    row_bytes = 2 * mod.H * mod.D * 2
    assert len(sets) == max(2, min(1 << 16, mod.FRESH_BYTES // (tokens * row_bytes)))
    owned = {i: set() for i in range(tokens)}
    for before, after in zip(sets, sets[1:]):
        slots_in_range(mod, after)
        assert torch.equal(before < 0, after < 0), "padding tokens move"
        for i, (a, b) in enumerate(zip(before.tolist(), after.tolist())):
            if a < 0:
                continue
            owned[i].add(a // mod.BLOCK_SIZE)
            if (a + 1) % mod.BLOCK_SIZE:
                assert b == a + 1, f"sequence {i}: {a} -> {b}, not its block's next slot"
            else:  # the block is full: the next one starts at its first slot
                assert b % mod.BLOCK_SIZE == 0, f"sequence {i}: {a} -> {b}"
    blocks = [b for bs in owned.values() for b in bs]
    assert len(blocks) == len(set(blocks)), "two sequences share a block"


def test_fresh_sets_differ_and_same_is_one_set(copy_rate):
    mod = copy_rate
    fresh = mod.slot_sets(16, "fresh")
    assert len(fresh) > 2 and not torch.equal(fresh[0], fresh[1])
    for s in fresh[:8]:
        slots_in_range(mod, s)
    assert len(mod.slot_sets(16, "same")) == 1
    prefill = mod.slot_sets(4096, "fresh")[0]
    slots_in_range(mod, prefill)
    assert torch.equal(prefill[:128] % mod.BLOCK_SIZE, torch.arange(128)), "prefill writes whole blocks"
