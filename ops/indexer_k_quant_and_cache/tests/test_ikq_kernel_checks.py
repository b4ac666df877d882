"""The kernel's own data checks (all or nothing, an error record) against the host's: for each bad
slot or overflowing float16 scale, run through the emulator with the host's data checks skipped,
the kernel must raise exactly the host's exception (class and message) and leave both caches
byte-for-byte untouched, also when the bad token is on a core other than 0, beyond the resident
tokens, and when two cores hold one (the lower token wins). The clean twin writes the caches."""
import numpy as np
import pytest

from ascend_ops.common.loader import load_native
from ascend_ops.indexer_k_quant_and_cache import reference

from ikq_cases import Case, make

core = load_native("ascend_ops.indexer_k_quant_and_cache", "core")

# 100 tokens: block_dim 10 (10 tokens per core: the most cores whose check exchange fits 1/40 of
# the bytes moved, host/tiling.cpp) on both presets.
CASE = Case(100, 100, 128, 64, 32, 4)
NUM_SLOTS = 32 * 4
SOCS = ["Ascend910B2", "Ascend910B4"]
BIG = 0x4B18  # bfloat16 9961472: amax / 127 > 65520, a float16 scale overflows


def args(slot_dtype, k_dtype="bfloat16"):
    k, cache, slots, scales, kwargs = make(CASE, k_dtype, slot_dtype, seed=5)
    return [k, cache, slots, scales], kwargs


def call(fn, a, kwargs, **extra):
    return fn(a[0], a[1], a[2], k_scale_cache=a[3], dtype="bfloat16", **kwargs, **extra)


def host_error(a, kwargs):
    with pytest.raises(Exception) as info:
        call(core.run_cpu, a, kwargs)
    return info.value


def kernel_error(a, kwargs, soc):
    with pytest.raises(Exception) as info:
        call(core.run_emu, a, kwargs, soc=soc, host_data_checks=False)
    return info.value


# (id, slot dtype, {token: bad slot}, [tokens whose group 1 overflows], first bad token)
CASES = [
    ("slot-core0-first-token", np.int64, {0: NUM_SLOTS}, [], 0),
    ("slot-middle-core", np.int64, {51: NUM_SLOTS + 7}, [], 51),
    ("slot-last-token", np.int32, {99: 2**31 - 1}, [], 99),
    ("slot-far-int64", np.int64, {70: 2**40}, [], 70),
    ("slot-two-cores-first-wins", np.int64, {83: NUM_SLOTS, 12: 2**33}, [], 12),
    ("overflow-core0", np.int32, {}, [1], 1),
    ("overflow-last-core", np.int64, {}, [98], 98),
    ("overflow-before-slot", np.int64, {40: NUM_SLOTS}, [20], 20),
    ("slot-before-overflow", np.int64, {20: NUM_SLOTS}, [40], 20),
    ("slot-then-overflow-same-token", np.int32, {30: NUM_SLOTS}, [30], 30),
]


def apply(a, bad, overflow):
    for t, slot in bad.items():
        a[2][t] = slot
    for t in overflow:
        a[0][t, 100] = BIG
        if a[2][t] < 0:
            a[2][t] = t  # a written token (padding is not checked)


@pytest.mark.parametrize("soc", SOCS)
@pytest.mark.parametrize("case_id,slot_dtype,bad,overflow,first", CASES, ids=[c[0] for c in CASES])
def test_kernel_error_is_the_host_error_and_caches_are_untouched(soc, case_id, slot_dtype, bad, overflow, first):
    a, kwargs = args(slot_dtype)
    apply(a, bad, overflow)
    before = [a[1].copy(), a[3].copy()]
    expected = host_error(a, kwargs)
    got = kernel_error(a, kwargs, soc)
    assert type(got) is type(expected)
    assert type(got) is (IndexError if first in bad else ValueError)
    assert str(got) == str(expected)
    assert (f"slot_mapping[{first}]" if first in bad else f"k[{first}]") in str(got)
    assert a[1].tobytes() == before[0].tobytes() and a[3].tobytes() == before[1].tobytes()


@pytest.mark.parametrize("soc", SOCS)
def test_overflow_beyond_the_resident_tokens(soc):
    """D = 4096 leaves UB for a few resident tokens per core: with 25 tokens per core the overflow
    is found in a token whose codes do not stay in UB (quantised again after the check)."""
    case = Case(48 * 25, 48 * 25, 4096, 2048, 48 * 25 // 16 + 1, 16)
    k, cache, slots, scales, kwargs = make(case, "bfloat16", np.int32, seed=6)
    t = 48 * 25 - 2  # on the last core (910B2), its 24th token
    k[t, 5] = BIG
    tiling = core.kernel_tiling(k, cache, slots, k_scale_cache=scales, dtype="bfloat16", soc=soc, **kwargs)
    assert tiling["resident_tokens"] < 23
    a = [k, cache, slots, scales]
    before = [cache.copy(), scales.copy()]
    expected = host_error(a, kwargs)
    got = kernel_error(a, kwargs, soc)
    assert str(got) == str(expected) and f"k[{t}]" in str(got)
    assert cache.tobytes() == before[0].tobytes() and scales.tobytes() == before[1].tobytes()


@pytest.mark.parametrize("soc", SOCS)
def test_clean_twin_passes_the_kernel_check_and_is_written(soc):
    """The same launches with clean data (padding -1, a large but finite scale) write the caches."""
    a, kwargs = args(np.int64)
    a[2][7] = -1
    a[0][3, 100] = 0x4AF0  # bfloat16 7864320: amax / 127 = 61924, below 65520
    want_cache, want_scales = reference.indexer_k_quant_and_cache(a[0], a[1], a[2], a[3], **kwargs)
    call(core.run_emu, a, kwargs, soc=soc, host_data_checks=False)
    np.testing.assert_array_equal(a[1], want_cache)
    np.testing.assert_array_equal(a[3], want_scales)
