"""Golden tests of the cpu and emu backends on NumPy arrays: exact, every dtype combination."""
import numpy as np
import pytest

from ascend_ops.adv_step_flash import advance_step_flashattn, reference

from asf_cases import ALL32, ALL64, NAMES, OUTPUTS, SHAPES, VLLM, Case, call_args, golden, make, param_ids, params

BACKENDS = ("cpu", "emu")
PAIRS = params()


def fewest_cores(units: int, cores: int) -> int:
    """The cores of a launch of `units` equal units: the fewest with the longest share of
    min(units, cores) cores (49 on 48 cores: 25 cores, 24 of 2 and one of 1)."""
    longest = -(-units // cores)
    return -(-units // longest)


def assert_outputs(arrays, expected):
    for name in OUTPUTS:
        assert arrays[name].dtype == expected[name].dtype, name
        np.testing.assert_array_equal(arrays[name], expected[name], err_msg=name)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case,combo", PAIRS, ids=param_ids(PAIRS))
def test_matches_reference_exactly(backend, case, combo):
    arrays, expected = golden(case, combo)
    inputs = ("sampled_token_ids", "block_tables") if arrays["block_tables"].size <= 1 << 20 else ("sampled_token_ids",)
    before = {n: arrays[n].copy() for n in inputs}
    assert advance_step_flashattn(*call_args(case, arrays), backend=backend) is None or backend == "emu"
    assert_outputs(arrays, expected)
    for name, old in before.items():  # inputs are not written
        np.testing.assert_array_equal(arrays[name], old)


def test_every_case_runs_all_int32_and_vllm_dtypes_where_they_fit():
    # the shapes beyond int32 are the only ones some combinations cannot hold
    for case in SHAPES:
        if case.pos_base < 2**31:
            assert case.fits(ALL32) and case.fits(VLLM), case
        assert case.fits(ALL64)


def test_positions_beyond_2_24_are_exact():
    """A float32 division (pos / block_size) rounds from 2^24 on; integer division does not."""
    case = Case(4, 4, 1, pos_base=2**24 + 1, span=2)
    arrays, expected = golden(case, ALL64)
    advance_step_flashattn(*call_args(case, arrays), backend="emu")
    assert_outputs(arrays, expected)
    pos = expected["input_positions"]
    assert (pos > 2**24).all() and (pos % 2 == 1).any()  # odd positions > 2^24: not float32-representable
    np.testing.assert_array_equal(np.float32(pos).astype(np.int64) == pos, pos % 2 == 0)


@pytest.mark.parametrize("soc", ["Ascend910B2", "Ascend910B4"])
@pytest.mark.parametrize("num_seqs", [1, 47, 48, 49, 1024, 3000])
def test_emulator_presets_and_sequence_counts(soc, num_seqs):
    """Sequences split over at most 48 or 40 cores with and without a remainder (the fewest cores
    with the same longest share); 3000 sequences need
    several UB chunks per core on neither preset, 1024 exactly one."""
    case = Case(num_seqs, max(1, num_seqs - num_seqs // 7), 16, span=3000, table_pad=3)
    arrays, expected = golden(case, VLLM, seed=num_seqs)
    report = advance_step_flashattn(*call_args(case, arrays), backend="emu", soc=soc)
    assert_outputs(arrays, expected)
    cores = 48 if soc == "Ascend910B2" else 40
    assert report["block_dim"] == fewest_cores(num_seqs, cores)


def test_emulator_chunks_within_a_core():
    """More sequences per core than one UB chunk holds (1024): the chunk loop and a padding
    boundary that falls inside a chunk."""
    case = Case(48 * 1500, 48 * 1500 - 777, 16, span=100)
    arrays, expected = golden(case, ALL32, seed=5)
    report = advance_step_flashattn(*call_args(case, arrays), backend="emu", order="in_order")
    assert_outputs(arrays, expected)
    assert report["max_ub_high_water"] <= 196608


def test_emulator_traffic_is_the_minimum():
    """GM bytes: seq_lens and tokens of the advancing rows read once, one table entry per
    advancing row (the rows are checked as they are computed: nothing is read twice); every output
    row written once (seq_lens only where advanced). Plus the check phase: word 0 of each core's
    check slot written (a scalar write: every slot is clean) and word 0 of every core's slot read
    by every core in one strided DMA (8 bytes per slot). (The emulator does not count the kernel's one read of the tiling struct.)"""
    case = Case(300, 250, 16, table_pad=8)
    arrays, expected = golden(case, VLLM)
    report = advance_step_flashattn(*call_args(case, arrays), backend="emu", order="in_order")
    assert_outputs(arrays, expected)
    s, q, cores = case.num_seqs, case.num_queries, report["block_dim"]
    totals = report["totals"]
    step_reads = q * 4 + q * 8 + q * 4  # seq_lens, sampled, table entries
    assert totals["gm_read_bytes"] == step_reads + cores * cores * 8
    assert totals["gm_write_bytes"] == s * 8 + s * 8 + q * 4 + s * 8 + cores * 8
    assert totals["gm_scalar_reads"] == q  # the table entries
    assert totals["gm_scalar_writes"] == cores


def test_multi_step_matches_reference():
    """64 steps of advance on a 256-sequence batch (200 real, 56 padding) match 64 steps of
    the reference, on both backends, with the sampled tokens of each step."""
    steps = 64
    case = Case(256, 200, 16, span=500, table_pad=4, headroom=steps)
    for backend in BACKENDS:
        for combo in (VLLM, ALL32):
            arrays = make(case, combo, seed=11)
            want = {n: arrays[n].copy() for n in NAMES}
            rng = np.random.default_rng(12)
            for _ in range(steps):
                sampled = rng.integers(0, 152064, (case.num_queries, 1)).astype(arrays["sampled_token_ids"].dtype)
                arrays["sampled_token_ids"] = sampled
                want["sampled_token_ids"] = sampled
                advance_step_flashattn(*call_args(case, arrays), backend=backend)
                want.update(reference.advance_step_flashattn(*call_args(case, want)))
            assert_outputs(arrays, want)
            start = make(case, combo, seed=11)["seq_lens"]
            np.testing.assert_array_equal(arrays["seq_lens"][:200], start[:200] + steps)
            np.testing.assert_array_equal(arrays["seq_lens"][200:], start[200:])


def test_tiling():
    from ascend_ops.common.loader import load_native

    core = load_native("ascend_ops.adv_step_flash", "core")
    case = Case(100, 90, 16, table_pad=8)
    arrays = make(case, VLLM)
    t = core.kernel_tiling(*call_args(case, arrays), soc="Ascend910B4")
    assert (t["block_dim"], t["seqs_per_core"], t["cores_with_extra"]) == (34, 2, 32)  # 32 cores of 3, 2 of 2
    assert t["table_row_stride"] == case.max_blocks + 8 and t["max_blocks"] == case.max_blocks
    assert (t["token_bytes"], t["seq_len_bytes"], t["table_bytes"]) == (8, 4, 4)
    assert t["chunk_seqs"] % 8 == 0 and t["chunk_seqs"] >= 3
