"""The kernel's own data check (all or nothing, an error record) against the host's: for each bad
slot, run through the emulator with the host's data checks skipped, the kernel must raise exactly
the host's exception (class and message) and leave both caches byte-for-byte untouched, also when
the bad token is on a core other than 0 and when two cores hold one (the lower token wins)."""
import numpy as np
import pytest

from ascend_ops.common.loader import load_native

from rac_cases import Shape, make

core = load_native("ascend_ops.reshape_and_cache", "core")

# 100 tokens: block_dim 48 on 910B2 (tokens 0-3 on core 0, 4-5 on core 1, ... 98-99 on core 47),
# 40 on 910B4. 32 blocks of 4 slots: 128 slots, 100 used.
SHAPE = Shape(100, 100, 2, 16, 8, 32, 4)
NUM_SLOTS = 32 * 4
SOCS = ["Ascend910B2", "Ascend910B4"]


def args(slot_dtype):
    key, value, key_cache, value_cache, slots = make(SHAPE, "float16", slot_dtype, seed=5)
    return [key, value, key_cache, value_cache, slots]


def host_error(a):
    with pytest.raises(Exception) as info:
        core.run_cpu(*a)
    return info.value


def kernel_error(a, soc):
    with pytest.raises(Exception) as info:
        core.run_emu(*a, soc=soc, host_data_checks=False)
    return info.value


# (id, slot dtype, {token: bad slot})
CASES = [
    ("core0-first-token", np.int64, {0: NUM_SLOTS}),
    ("middle-core", np.int64, {51: NUM_SLOTS + 7}),
    ("last-token", np.int32, {99: 2**31 - 1}),
    ("far-int64", np.int64, {70: 2**40}),
    ("two-cores-first-wins", np.int64, {83: NUM_SLOTS, 12: 2**33}),
    ("two-on-one-core", np.int32, {1: NUM_SLOTS + 1, 0: NUM_SLOTS + 2}),
]


@pytest.mark.parametrize("soc", SOCS)
@pytest.mark.parametrize("case_id,slot_dtype,bad", CASES, ids=[c[0] for c in CASES])
def test_kernel_error_is_the_host_error_and_caches_are_untouched(soc, case_id, slot_dtype, bad):
    a = args(slot_dtype)
    for t, slot in bad.items():
        a[4][t] = slot
    before = [a[2].copy(), a[3].copy()]
    expected = host_error(a)
    got = kernel_error(a, soc)
    assert type(got) is type(expected) is IndexError
    assert str(got) == str(expected)
    assert f"slot_mapping[{min(bad)}]" in str(got)
    assert a[2].tobytes() == before[0].tobytes() and a[3].tobytes() == before[1].tobytes()


@pytest.mark.parametrize("soc", SOCS)
def test_clean_slots_pass_the_kernel_check_and_are_written(soc):
    """The correct twin: the same launch with valid slots (and padding -1) writes the caches."""
    a = args(np.int64)
    a[4][7] = -1
    expected = [a[2].copy(), a[3].copy()]
    core.run_cpu(*a[:2], expected[0], expected[1], a[4])
    core.run_emu(*a, soc=soc, host_data_checks=False)
    assert a[2].tobytes() == expected[0].tobytes() and a[3].tobytes() == expected[1].tobytes()


def test_key_only_nz_bad_slot():
    key, _, _, _, slots = make(Shape(9, 9, 2, 16, 16, 4, 4), "float16", np.int64, seed=2)
    key_cache = np.zeros((4, 2, 4, 16), np.float16)
    slots[5] = 16
    with pytest.raises(IndexError) as info:
        core.run_cpu(key, None, key_cache, None, slots, cache_mode=1)
    expected = str(info.value)
    with pytest.raises(IndexError, match=r"slot_mapping\[5\]") as info:
        core.run_emu(key, None, key_cache, None, slots, cache_mode=1, host_data_checks=False)
    assert str(info.value) == expected
    assert not key_cache.any()
