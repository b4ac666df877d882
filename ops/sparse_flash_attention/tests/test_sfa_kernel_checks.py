"""The kernel's own data checks (all or nothing, an error record) against the host's: for each
kind of bad lengths, block ids or indices, run through the emulator with the host's data checks
skipped, the kernel must raise exactly the host's exception (class and message) and leave every
output byte-for-byte untouched, also when the bad batch is checked by an AIV other than 0 and
when two AIVs find one: the earlier check phase (query lengths, kv lengths, block ids, indices)
wins, then the lower batch."""
import numpy as np
import pytest

from ascend_ops.common.loader import load_native

from sfa_cases import Shape, make

core = load_native("ascend_ops.sparse_flash_attention", "core")
if not core.HAS_EMU:
    pytest.skip("the emulator build is off (AOP_WITH_EMU): no emu backend to test", allow_module_level=True)

SOCS = ["Ascend910B2", "Ascend910B4"]
B = 30  # decode, one query row per batch: block_dim 24 (910B2) / 20 (910B4), 48 / 40 AIVs check batches


def shape(s1=1):
    return Shape((s1,) * B, tuple(16 + 5 * (b % 7) for b in range(B)), 4, 512, 64, 8, block_size=16, s2_pad=3)


def args(layout_query, layout_kv, s1=1):
    return make(shape(s1), layout_query, layout_kv, "float16", seed=4, tails=False)


def put(name, index, value):
    def mutate(a):
        a[name][index] = value
    return mutate


def key_blocks(a):
    return a["key"].shape[0]


def first_index(row):
    """Mutation: entry 0 of flat row `row` of the indices below -1."""
    def mutate(a):
        a["sparse_indices"].reshape(-1, a["sparse_indices"].shape[-1])[row, 0] = -7
    return mutate


def index_after_valid(row, value):
    """Entry 3 (of the n read: every batch has >= 16 keys) of flat row `row` set to `value`."""
    def mutate(a):
        a["sparse_indices"].reshape(-1, a["sparse_indices"].shape[-1])[row, 3] = value
    return mutate


CASES = [
    # (id, layouts, mutations)
    ("block-id-too-large", ("BSND", "PA_BSND"), [lambda a: put("block_table", (17, 0), key_blocks(a))(a)]),
    ("block-id-negative-second-block", ("BSND", "PA_BSND"), [put("actual_seq_lengths_kv", 25, 20),
                                                               put("block_table", (25, 1), -3)]),
    ("kv-length-beyond-table", ("BSND", "PA_BSND"), [put("actual_seq_lengths_kv", 9, 10**5)]),
    ("kv-length-negative", ("BSND", "PA_BSND"), [put("actual_seq_lengths_kv", 29, -1)]),
    ("kv-length-beyond-S2", ("BSND", "BSND"), [put("actual_seq_lengths_kv", 21, 10**4)]),
    ("query-ends-decrease", ("TND", "PA_BSND"), [put("actual_seq_lengths_query", 14, 3)]),
    ("query-end-negative", ("TND", "PA_BSND"), [put("actual_seq_lengths_query", 0, -4)]),
    ("kv-ends-decrease", ("TND", "TND"), [put("actual_seq_lengths_kv", 19, 0)]),
    ("kv-ends-beyond-T2", ("TND", "TND"), [put("actual_seq_lengths_kv", B - 1, 10**6)]),
    ("index-below-minus-one-first", ("BSND", "PA_BSND"), [first_index(11)]),
    ("index-below-minus-one-late-batch", ("TND", "PA_BSND"), [index_after_valid(28, -2)]),
    # two errors: the lower batch of one phase wins
    ("two-indices-first-wins", ("BSND", "PA_BSND"), [first_index(26), index_after_valid(3, -100)]),
    ("two-block-ids-first-wins", ("BSND", "PA_BSND"), [put("block_table", (26, 0), -1),
                                                        put("block_table", (3, 0), 10**6)]),
    # two errors: the earlier phase wins over a lower batch
    ("block-phase-before-index-phase", ("BSND", "PA_BSND"), [first_index(0), put("block_table", (27, 0), -1)]),
    ("kv-phase-before-block-phase", ("BSND", "PA_BSND"), [put("block_table", (2, 0), -1),
                                                           put("actual_seq_lengths_kv", 27, -5)]),
]


@pytest.mark.parametrize("soc", SOCS)
@pytest.mark.parametrize("case_id,layouts,mutations", CASES, ids=[c[0] for c in CASES])
def test_kernel_error_is_the_host_error_and_outputs_are_untouched(soc, case_id, layouts, mutations):
    a = args(*layouts)
    for m in mutations:
        m(a)
    assert_kernel_error_is_host_error(a, soc)


@pytest.mark.parametrize("soc", SOCS)
def test_bsnd_query_lengths(soc):
    """act_q beyond S1 and negative (BSND query with actual_seq_lengths_query)."""
    for index, value in ((12, 3), (0, -1)):
        a = args("BSND", "PA_BSND", s1=2)
        a["actual_seq_lengths_query"] = np.full(B, 2, np.int32)
        put("actual_seq_lengths_query", index, value)(a)
        assert_kernel_error_is_host_error(a, soc)


@pytest.mark.parametrize("soc", SOCS)
def test_split_rows_check_before_the_entries_are_recorded(soc):
    """Decode rows split over several AICs (the check phase also records each row's entries
    before its first -1): a bad index still stops every core before anything is written."""
    a = make(Shape((1, 1), (3000, 2000), 16, 512, 64, 1024, block_size=128), "BSND", "PA_BSND", "float16", seed=2,
             tails=False)
    assert core.kernel_tiling(**a, soc=soc)["splits"] > 1
    first_index(1)(a)
    assert_kernel_error_is_host_error(a, soc)
    a["sparse_indices"].reshape(2, -1)[1, 0] = 5
    out, m, l = outputs(a)
    core.run_emu(**a, return_softmax_lse=True, soc=soc, order="in_order", host_data_checks=False,
                 attention_out=out, softmax_max=m, softmax_sum=l)
    want, want_m, want_l, _ = core.run_emu(**a, return_softmax_lse=True, soc=soc, order="in_order")
    assert out.tobytes() == want.tobytes() and m.tobytes() == want_m.tobytes() and l.tobytes() == want_l.tobytes()


def test_index_beyond_the_entries_read_is_not_an_error():
    """Entries past the first -1, and past n, are never read: no error, outputs written."""
    a = args("BSND", "PA_BSND")
    flat = a["sparse_indices"].reshape(-1, a["sparse_indices"].shape[-1])
    flat[5, 2] = -1
    flat[5, 3] = -9  # after the -1
    out, m, l, _ = core.run_emu(**a, return_softmax_lse=True, order="in_order", host_data_checks=False)
    want, _, _ = core.run_cpu(**a, return_softmax_lse=True)
    assert out.shape == want.shape


def assert_kernel_error_is_host_error(a, soc):
    with pytest.raises(Exception) as host:
        core.run_cpu(**a, return_softmax_lse=True)
    assert type(host.value) in (ValueError, IndexError)
    out, m, l = outputs(a)
    before = out.tobytes(), m.tobytes(), l.tobytes()
    with pytest.raises(Exception) as kernel:
        core.run_emu(**a, return_softmax_lse=True, soc=soc, order="in_order", host_data_checks=False,
                     attention_out=out, softmax_max=m, softmax_sum=l)
    assert type(kernel.value) is type(host.value)
    assert str(kernel.value) == str(host.value)
    assert (out.tobytes(), m.tobytes(), l.tobytes()) == before


def outputs(a):
    """Output arrays of the op's shapes, prefilled with a pattern the kernel must not touch."""
    q = a["query"]
    if a["layout_query"] == "TND":
        lse_shape = (1, q.shape[0], q.shape[1])
    else:
        lse_shape = (q.shape[0], 1, q.shape[1], q.shape[2])
    return np.full(q.shape, 3.0, q.dtype), np.full(lse_shape, 0.5, np.float32), np.full(lse_shape, 1.5, np.float32)


@pytest.mark.parametrize("soc", SOCS)
def test_clean_data_pass_the_kernel_check_and_are_written(soc):
    """The correct twin: the same launch on valid data writes the outputs (as the host-checked run)."""
    a = args("BSND", "PA_BSND")
    out, m, l = outputs(a)
    core.run_emu(**a, return_softmax_lse=True, soc=soc, order="in_order", host_data_checks=False,
                 attention_out=out, softmax_max=m, softmax_sum=l)
    want, want_m, want_l, _ = core.run_emu(**a, return_softmax_lse=True, soc=soc, order="in_order")
    assert out.tobytes() == want.tobytes() and m.tobytes() == want_m.tobytes() and l.tobytes() == want_l.tobytes()
