"""Property test: random sizes, dtypes, positions and table layouts on cpu and emu match the reference."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ascend_ops.adv_step_flash import advance_step_flashattn

from asf_cases import DTYPE_COMBOS, OUTPUTS, Case, call_args, golden


@st.composite
def cases(draw):
    block_size = draw(st.sampled_from([1, 2, 3, 16, 100, 128, 1024]))
    # positions near 2^24 and beyond with the blocks that keep the table a few hundred MB
    # of (untouched) zero pages at most
    pos_base = draw(st.sampled_from([0, 1000, 2**24 - 50, 2**27] if block_size >= 128 else [0, 1000]))
    num_seqs = draw(st.integers(1, 300 if pos_base < 2**20 else 40))
    case = Case(
        num_seqs=num_seqs,
        num_queries=draw(st.integers(1, num_seqs)),
        block_size=block_size,
        pos_base=pos_base,
        span=draw(st.integers(1, 300)),
        table_pad=draw(st.sampled_from([0, 1, 7])),
        sampled_2d=draw(st.booleans()),
        block_base=draw(st.sampled_from([0, 2**14])),
    )
    combo = draw(st.sampled_from([c for c in DTYPE_COMBOS if case.fits(c)]))
    return case, combo, draw(st.integers(0, 2**16))


@pytest.mark.parametrize("backend", ["cpu", "emu"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_property_matches_reference(backend, case):
    case, combo, seed = case
    arrays, expected = golden(case, combo, seed)
    advance_step_flashattn(*call_args(case, arrays), backend=backend)
    for name in OUTPUTS:
        np.testing.assert_array_equal(arrays[name], expected[name], err_msg=name)
