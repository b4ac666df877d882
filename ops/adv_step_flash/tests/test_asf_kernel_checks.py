"""The kernel's own data checks (all or nothing, an error record) against the host's: for each
kind of bad row, run through the emulator with the host's data checks skipped, the kernel must
raise exactly the host's exception (class and message) and leave all four outputs byte-for-byte
untouched, also when the bad row is on a core other than 0 and when two cores hold one (the lower
row wins)."""
import numpy as np
import pytest

from ascend_ops.common.loader import load_native

from asf_cases import ALL64, NAMES, OUTPUTS, Case, call_args, make

core = load_native("ascend_ops.adv_step_flash", "core")

# 200 sequences, 180 advancing: block_dim 48 on 910B2 (rows 0-4 on core 0, ..., 176-179 on core 43),
# 40 on 910B4 (5 rows per core). max_blocks = 60 // 16 + 1 = 4.
SOCS = ["Ascend910B2", "Ascend910B4"]
INT64_MAX = 2**63 - 1


def dtypes(**overrides):
    d = dict(zip(NAMES, ALL64))
    d.update(overrides)
    return tuple(d[n] for n in NAMES)


def seq_len(row, value):
    def mutate(case, a):
        a["seq_lens"][row] = value
    return mutate


def table_entry(row, value):
    """block_tables[row, seq_lens[row] // block_size] = value: the entry the step reads."""
    def mutate(case, a):
        a["block_tables"][row, int(a["seq_lens"][row]) // case.block_size] = value
    return mutate


def token(row, value):
    def mutate(case, a):
        a["sampled_token_ids"][row] = value
    return mutate


def zero_table(case, a):
    a["block_tables"][...] = 0


# (id, block_size, dtypes, mutations, exception)
CASES = [
    ("seq-len-negative", 16, ALL64, [seq_len(0, -1)], ValueError),
    ("block-index-beyond-table", 16, ALL64, [seq_len(37, 4 * 16)], IndexError),
    ("block-id-negative", 16, dtypes(block_tables="int32"), [table_entry(101, -5)], ValueError),
    ("slot-overflows-int64", 16, ALL64, [table_entry(150, 2**62)], ValueError),
    ("seq-len-cannot-advance", 2**62, ALL64, [zero_table, seq_len(60, INT64_MAX)], ValueError),  # table width 2
    ("token-int32", 16, dtypes(input_tokens="int32"), [token(179, 2**40)], ValueError),
    ("position-int32", 2**32, dtypes(input_positions="int32"), [zero_table, seq_len(90, 2**31)], ValueError),
    ("seq-len-int32", 2**31, dtypes(seq_lens="int32"), [zero_table, seq_len(45, 2**31 - 1)], ValueError),
    ("slot-int32", 16, dtypes(slot_mapping="int32"), [table_entry(120, 2**28)], ValueError),
    ("two-cores-first-wins", 16, ALL64, [table_entry(170, -1), seq_len(33, -7)], ValueError),
    ("two-kinds-on-two-cores", 16, dtypes(slot_mapping="int32"), [table_entry(9, 2**28), seq_len(140, 999)],
     ValueError),
]


def build(block_size, combo, mutations):
    # a huge block size leaves room in the table for a huge position (INT64_MAX // 2**62 = 1)
    case = Case(200, 180, block_size, span=60, headroom=2**62 if block_size == 2**62 else 0)
    a = make(case, combo, seed=11)
    for m in mutations:
        m(case, a)
    return case, a


@pytest.mark.parametrize("soc", SOCS)
@pytest.mark.parametrize("case_id,block_size,combo,mutations,exc", CASES, ids=[c[0] for c in CASES])
def test_kernel_error_is_the_host_error_and_outputs_are_untouched(soc, case_id, block_size, combo, mutations, exc):
    case, a = build(block_size, combo, mutations)
    before = {n: a[n].copy() for n in OUTPUTS}
    with pytest.raises(exc) as host:
        core.run_cpu(*call_args(case, a))
    for n in OUTPUTS:
        assert a[n].tobytes() == before[n].tobytes(), n
    with pytest.raises(exc) as kernel:
        core.run_emu(*call_args(case, a), soc=soc, host_data_checks=False)
    assert type(kernel.value) is type(host.value)
    assert str(kernel.value) == str(host.value)
    for n in OUTPUTS:
        assert a[n].tobytes() == before[n].tobytes(), n


@pytest.mark.parametrize("soc", SOCS)
def test_clean_rows_pass_the_kernel_check_and_are_written(soc):
    """The correct twin: valid rows (int32 outputs that fit) advance as on the cpu backend."""
    case, a = build(16, dtypes(slot_mapping="int32", input_tokens="int32"), [])
    expected = {n: a[n].copy() for n in NAMES}
    core.run_cpu(*call_args(case, expected))
    core.run_emu(*call_args(case, a), soc=soc, host_data_checks=False)
    for n in OUTPUTS:
        assert a[n].tobytes() == expected[n].tobytes(), n
