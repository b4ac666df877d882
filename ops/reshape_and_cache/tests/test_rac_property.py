"""Property test: random shapes, dtypes and slot patterns on cpu and emu match the reference."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ascend_ops.reshape_and_cache import reference, reshape_and_cache

from rac_cases import DTYPES, Shape, make


@st.composite
def cases(draw):
    block_size = draw(st.sampled_from([1, 2, 4, 16, 32]))
    num_blocks = draw(st.integers(1, 12))
    slots_total = num_blocks * block_size
    written = draw(st.integers(0, min(slots_total, 64)))
    tokens = written + draw(st.integers(0, 3))
    shape = Shape(
        tokens=tokens, written=written, heads=draw(st.integers(1, 4)),
        dk=draw(st.integers(1, 40)), dv=draw(st.integers(1, 40)),
        num_blocks=num_blocks, block_size=block_size,
        key_pad=draw(st.sampled_from([0, 1, 13])),
        padding=draw(st.integers(0, written)),
    )
    return shape, draw(st.sampled_from(DTYPES)), draw(st.sampled_from([np.int32, np.int64])), draw(st.integers(0, 2**16))


@pytest.mark.parametrize("backend", ["cpu", "emu"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_property_matches_reference(backend, case):
    shape, dtype, slot_dtype, seed = case
    key, value, key_cache, value_cache, slots = make(shape, dtype, slot_dtype, seed=seed)
    want_key, want_value = reference.reshape_and_cache(key, value, key_cache, value_cache, slots)
    reshape_and_cache(key, value, key_cache, value_cache, slots, backend=backend,
                      dtype="bfloat16" if dtype == "bfloat16" else None)
    np.testing.assert_array_equal(key_cache.view(np.uint8), want_key.view(np.uint8))
    np.testing.assert_array_equal(value_cache.view(np.uint8), want_value.view(np.uint8))
