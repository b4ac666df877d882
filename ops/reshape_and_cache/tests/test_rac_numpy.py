"""Golden tests of the cpu and emu backends on NumPy arrays: exact (a bit copy)."""
import numpy as np
import pytest

from ascend_ops.reshape_and_cache import reference, reshape_and_cache

from rac_cases import DTYPES, SHAPES, SLOT_DTYPES, Shape, make

BACKENDS = ("cpu", "emu")


def fewest_cores(units: int, cores: int) -> int:
    """The cores of a launch of `units` equal units: the fewest with the longest share of
    min(units, cores) cores (49 on 48 cores: 25 cores, 24 of 2 and one of 1)."""
    longest = -(-units // cores)
    return -(-units // longest)


def run(backend, key, value, key_cache, value_cache, slots, dtype, **kwargs):
    as_dtype = "bfloat16" if dtype == "bfloat16" else None
    return reshape_and_cache(key, value, key_cache, value_cache, slots, backend=backend,
                             dtype=as_dtype, **kwargs)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("slot_dtype", SLOT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_matches_reference_exactly(backend, shape, dtype, slot_dtype):
    key, value, key_cache, value_cache, slots = make(shape, dtype, slot_dtype)
    want_key, want_value = reference.reshape_and_cache(key, value, key_cache, value_cache, slots)
    run(backend, key, value, key_cache, value_cache, slots, dtype)
    np.testing.assert_array_equal(key_cache.view(np.uint8), want_key.view(np.uint8))
    np.testing.assert_array_equal(value_cache.view(np.uint8), want_value.view(np.uint8))


@pytest.mark.parametrize("soc", ["Ascend910B2", "Ascend910B4"])
@pytest.mark.parametrize("tokens", [1, 47, 48, 49, 2500])
@pytest.mark.parametrize("head_size", [128, 72, 17])
def test_emulator_presets_and_token_counts(soc, tokens, head_size):
    """Tokens split over at most 48 or 40 cores (the fewest with the same longest share), with
    and without a remainder; rows that are and are
    not multiples of 16 elements (the 32-byte burst of float16)."""
    shape = Shape(tokens, tokens, 2, head_size, head_size, (tokens + 15) // 16 + 1, 16, padding=tokens // 10)
    key, value, key_cache, value_cache, slots = make(shape, "float16", np.int32, seed=tokens)
    want_key, want_value = reference.reshape_and_cache(key, value, key_cache, value_cache, slots)
    report = run("emu", key, value, key_cache, value_cache, slots, "float16", soc=soc)
    np.testing.assert_array_equal(key_cache, want_key)
    np.testing.assert_array_equal(value_cache, want_value)
    cores = 48 if soc == "Ascend910B2" else 40
    assert report["block_dim"] == fewest_cores(tokens, cores)


def test_emulator_traffic_is_the_minimum():
    """GM bytes read and written: every written row once each way, plus one slot read per token
    (each core's share of slot_mapping in one DMA, reused by the copy); plus the check phase: word
    0 of each core's check slot written (a scalar write: every slot is clean) and word 0 of every
    core's slot read by every core in one strided DMA (8 bytes per slot)."""
    shape = Shape(200, 180, 4, 128, 96, 20, 16, padding=20)
    key, value, key_cache, value_cache, slots = make(shape, "bfloat16", np.int64)
    report = run("emu", key, value, key_cache, value_cache, slots, "bfloat16", order="in_order")
    written = int((slots >= 0).sum())
    row_bytes = 4 * (128 + 96) * 2
    totals = report["totals"]
    cores = report["block_dim"]
    assert totals["gm_write_bytes"] == written * row_bytes + cores * 8
    assert totals["gm_read_bytes"] == written * row_bytes + len(slots) * 8 + cores * cores * 8
    assert totals["gm_scalar_reads"] == 0
    assert totals["gm_scalar_writes"] == cores
    # One DMA per row and direction (rows fit one UB burst), and two per core in: its slots, the
    # check slots' codes.
    assert totals["gm_to_local"]["transfers"] == 2 * written + 2 * cores
    assert totals["local_to_gm"]["transfers"] == 2 * written


def test_rows_larger_than_ub_are_split_into_bursts():
    """A row of 8*8192 float32 = 256 KiB exceeds the 96 KiB double-buffer half of UB."""
    shape = Shape(3, 3, 8, 8192, 16, 2, 2)
    key, value, key_cache, value_cache, slots = make(shape, "float32", np.int32)
    want_key, want_value = reference.reshape_and_cache(key, value, key_cache, value_cache, slots)
    report = run("emu", key, value, key_cache, value_cache, slots, "float32")
    np.testing.assert_array_equal(key_cache, want_key)
    np.testing.assert_array_equal(value_cache, want_value)
    assert report["max_ub_high_water"] <= 196608
    assert report["totals"]["gm_to_local"]["transfers"] > 2 * 3


def test_tiling_comes_from_the_tiling_cache():
    """The second launch of the same shapes on the same preset is a tiling-cache hit; another
    preset is a miss (the platform is part of the key)."""
    from ascend_ops.common import cache_stats

    def tiling_counters():
        (stats,) = [s for s in cache_stats() if s["name"] == "tiling"]
        return stats["hits"], stats["misses"]

    shape = Shape(9, 9, 2, 16, 16, 2, 8)
    args = make(shape, "float16", np.int32, seed=11)
    run("emu", *args, "float16", soc="Ascend910B2")
    hits, misses = tiling_counters()
    run("emu", *args, "float16", soc="Ascend910B2")
    assert tiling_counters() == (hits + 1, misses)
    run("emu", *args, "float16", soc="Ascend910B4")
    assert tiling_counters() == (hits + 1, misses + 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_ml_dtypes_bfloat16_arrays_need_no_dtype(backend):
    """bfloat16 as ml_dtypes.bfloat16 arrays: the same bytes written as with uint16 bits and
    dtype="bfloat16"; caches of another dtype are refused naming both."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    key, value, key_cache, value_cache, slots = make(SHAPES[1], "bfloat16", np.int32)
    want_key, want_value = reference.reshape_and_cache(key, value, key_cache, value_cache, slots)
    as_bf16 = [a.view(ml_dtypes.bfloat16) for a in (key, value, key_cache, value_cache)]
    reshape_and_cache(*as_bf16, slots, backend=backend)
    np.testing.assert_array_equal(key_cache, want_key)  # written through the bfloat16 views
    np.testing.assert_array_equal(value_cache, want_value)
    with pytest.raises(TypeError, match="reshape_and_cache: .*key_cache"):
        reshape_and_cache(as_bf16[0], as_bf16[1], key_cache.view(np.float16), as_bf16[3], slots,
                          backend=backend)
