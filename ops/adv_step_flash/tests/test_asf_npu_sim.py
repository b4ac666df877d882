"""The NPU host path (run_npu: common's npu::run_kernel over op.h) on common's simulated Ascend runtime: golden results,
and what a steady-state call costs the host: 0 synchronisations, 0 copies, 0 allocations."""
import numpy as np
import pytest

from ascend_ops.adv_step_flash import _core
from ascend_ops.devkit import ascend_sim as sim
from ascend_ops.common import check_errors

from asf_bad_cases import base, element, table_entry_of
from asf_cases import NAMES, OUTPUTS, SHAPES, VLLM, ALL32, ALL64, golden, param_ids, params

pytestmark = pytest.mark.skipif(not getattr(_core, "HAS_NPU_SIM", False),
                                reason="built without AOP_WITH_NPU_SIM (./dev builds it)")
# The cases whose block table is small enough to copy (the huge ones are the emu tests' job).
PAIRS = [(c, k) for c, k in params(combos=[VLLM, ALL32, ALL64]) if c.max_blocks * c.num_seqs <= 1 << 20]


@pytest.fixture(scope="module")
def stream():
    s = sim.Stream()
    yield s
    s.destroy()


def call(case, dev, stream):
    _core.run_npu_sim(case.num_seqs, case.num_queries, case.block_size, *(dev[n].array for n in NAMES),
                      stream=stream.handle)


@pytest.mark.parametrize("case,combo", PAIRS, ids=param_ids(PAIRS))
def test_matches_reference_exactly(stream, case, combo):
    arrays, expected = golden(case, combo)
    dev = {n: sim.to_device(a) for n, a in arrays.items()}
    call(case, dev, stream)
    stream.synchronize()
    for name in OUTPUTS:
        np.testing.assert_array_equal(dev[name].numpy(), expected[name], err_msg=name)
    for name in ("sampled_token_ids", "block_tables"):
        np.testing.assert_array_equal(dev[name].numpy(), arrays[name], err_msg=name)


def test_steady_state_call_makes_no_sync_copy_or_allocation(stream):
    case = SHAPES[4]
    arrays, _ = golden(case, VLLM)
    dev = {n: sim.to_device(a) for n, a in arrays.items()}
    call(case, dev, stream)  # the first call of a configuration copies its tiling once
    stream.synchronize()
    before = sim.counters()
    for _ in range(5):
        call(case, dev, stream)
    per_5 = sim.counters() - before
    assert per_5.launches == 5
    assert (per_5.synchronizations, per_5.h2d_copies, per_5.d2h_copies, per_5.d2d_copies,
            per_5.allocations, per_5.pageable_refused) == (0, 0, 0, 0, 0, 0)
    stream.synchronize()


# (id, mutation, exception): data only the kernel reads, so only its in-kernel check finds them
BAD_DATA = [
    ("block-index-beyond-table", element("seq_lens", 2, 4 * 16), IndexError),
    ("negative-block-id", table_entry_of(3, -5), ValueError),
]


@pytest.mark.parametrize("name,mutate,exc", BAD_DATA, ids=[b[0] for b in BAD_DATA])
def test_bad_data_raises_at_check_errors_with_every_output_unchanged(stream, name, mutate, exc):
    from ascend_ops.adv_step_flash import advance_step_flashattn

    args = mutate(base())
    with pytest.raises(exc) as sync_error:  # the synchronous check's exception for this input
        advance_step_flashattn(args["num_seqs"], args["num_queries"], args["block_size"],
                               *(args[n].copy() for n in NAMES), backend="cpu")
    dev = {n: sim.to_device(args[n]) for n in NAMES}
    _core.run_npu_sim(args["num_seqs"], args["num_queries"], args["block_size"], *(dev[n].array for n in NAMES),
                      stream=stream.handle)  # queued: nothing raised
    with pytest.raises(exc) as raised:
        check_errors()
    assert str(raised.value) == str(sync_error.value)
    for n in NAMES:  # every output (and input) byte as it was
        np.testing.assert_array_equal(dev[n].numpy(), args[n], err_msg=n)
