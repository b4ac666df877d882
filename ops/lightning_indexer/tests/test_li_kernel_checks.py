"""The kernel's own data checks (all or nothing, an error record) against the host's: for each
kind of bad lengths or block ids, run through the emulator with the host's data checks skipped,
the kernel must raise exactly the host's exception (class and message) and leave both outputs
byte-for-byte untouched, also when the bad batch is checked by an AIV other than 0 and when two
AIVs find one: the earlier check phase (query lengths, key lengths, block ids, cmp_residual_k)
wins, then the lower batch."""
import numpy as np
import pytest

from ascend_ops.common.loader import load_native

from li_cases import Shape, make

core = load_native("ascend_ops.lightning_indexer", "core")
if not core.HAS_EMU:
    pytest.skip("the emulator build is off (AOP_WITH_EMU): no emu backend to test", allow_module_level=True)

SOCS = ["Ascend910B2", "Ascend910B4"]
B = 30  # decode, one query row per batch: 30 work items -> block_dim 24 (910B2) / 20 (910B4), 48 / 40 AIVs


def shape():
    return Shape((1,) * B, tuple(16 + 5 * (b % 7) for b in range(B)), 4, 128, 8, block_size=16, extra_q=0)


def args(layout_query, layout_key):
    return make(shape(), layout_query, layout_key, "float16", seed=4)


def put(name, index, value):
    def mutate(a):
        a[name][index] = value
    return mutate


def key_blocks(a):
    return a["key"].shape[0]


def compressed(ratio, dtype=np.int32):
    """cmp_ratio = ratio with valid residuals (b mod ratio)."""
    def mutate(a):
        a.update(cmp_ratio=ratio, cmp_residual_k=(np.arange(B) % ratio).astype(dtype))
    return mutate


CASES = [
    # (id, layouts, mutations)
    ("block-id-too-large", ("BSND", "PA_BSND"), [lambda a: put("block_table", (17, 0), key_blocks(a))(a)]),
    ("block-id-negative-second-block", ("BSND", "PA_BSND"), [put("actual_seq_lengths_key", 25, 20),
                                                               put("block_table", (25, 1), -3)]),
    ("key-length-beyond-table", ("BSND", "PA_BSND"), [put("actual_seq_lengths_key", 9, 10**5)]),
    ("key-length-negative", ("BSND", "PA_BSND"), [put("actual_seq_lengths_key", 29, -1)]),
    ("query-length-beyond-S1", ("BSND", "PA_BSND"), [put("actual_seq_lengths_query", 12, 2)]),
    ("query-length-negative", ("BSND", "BSND"), [put("actual_seq_lengths_query", 0, -4)]),
    ("key-length-beyond-S2", ("BSND", "BSND"), [put("actual_seq_lengths_key", 21, 10**4)]),
    ("query-ends-decrease", ("TND", "PA_BSND"), [put("actual_seq_lengths_query", 14, 3)]),
    ("key-ends-decrease", ("BSND", "TND"), [put("actual_seq_lengths_key", 19, 0)]),
    ("key-ends-beyond-T2", ("BSND", "TND"), [put("actual_seq_lengths_key", B - 1, 10**6)]),
    # compressed keys: cmp_residual_k outside [0, cmp_ratio), checked last (a phase of its own)
    ("residual-equal-to-ratio", ("BSND", "PA_BSND"), [compressed(4), put("cmp_residual_k", 23, 4)]),
    ("residual-negative-int64", ("TND", "TND"), [compressed(128, np.int64), put("cmp_residual_k", 7, -1)]),
    ("residual-under-mode-0", ("BSND", "BSND"), [compressed(2), lambda a: a.update(sparse_mode=0),
                                                  put("cmp_residual_k", 29, 5)]),
    ("block-phase-before-residual-phase", ("BSND", "PA_BSND"), [compressed(4), put("cmp_residual_k", 1, 9),
                                                                 put("block_table", (20, 0), -1)]),
    # two errors: the lower batch of one phase wins
    ("two-block-ids-first-wins", ("BSND", "PA_BSND"), [put("block_table", (26, 0), -1),
                                                        put("block_table", (3, 0), 10**6)]),
    # two errors: the earlier phase wins over a lower batch (the host checks all query lengths first)
    ("query-phase-before-block-phase", ("BSND", "PA_BSND"), [put("block_table", (2, 0), -1),
                                                              put("actual_seq_lengths_query", 27, 5)]),
]


@pytest.mark.parametrize("soc", SOCS)
@pytest.mark.parametrize("case_id,layouts,mutations", CASES, ids=[c[0] for c in CASES])
def test_kernel_error_is_the_host_error_and_outputs_are_untouched(soc, case_id, layouts, mutations):
    a = args(*layouts)
    for m in mutations:
        m(a)
    assert_kernel_error_is_host_error(a, soc)


# A TND prefill query (groups of several rows, items found from the query ends): bad ends must
# not send the AIC's first block outside a tensor before the verdict.
@pytest.mark.parametrize("soc", SOCS)
@pytest.mark.parametrize("case_id,index,value", [("ends-decrease", 3, 2), ("end-beyond-T1", 5, 10**4),
                                                  ("end-negative", 0, -7)])
def test_tnd_prefill_bad_query_ends(soc, case_id, index, value):
    a = make(Shape((5,) * 8, (40,) * 8, 8, 128, 8, block_size=16, extra_q=1), "TND", "PA_BSND", "float16", seed=6)
    assert core.kernel_tiling(**a)["rows_per_group"] > 1
    put("actual_seq_lengths_query", index, value)(a)
    assert_kernel_error_is_host_error(a, soc)


def assert_kernel_error_is_host_error(a, soc):
    with pytest.raises(Exception) as host:
        core.run_cpu(**a)
    assert type(host.value) in (ValueError, IndexError)
    indices, values = outputs(a)
    before = indices.copy(), values.copy()
    with pytest.raises(Exception) as kernel:
        core.run_emu(**a, return_value=True, soc=soc, order="in_order", host_data_checks=False,
                     out_indices=indices, out_values=values)
    assert type(kernel.value) is type(host.value)
    assert str(kernel.value) == str(host.value)
    assert indices.tobytes() == before[0].tobytes() and values.tobytes() == before[1].tobytes()


def outputs(a):
    """Output arrays of the op's shape, prefilled with a pattern the kernel must not touch."""
    lq = a["layout_query"]
    rows = a["query"].shape[:2] if lq == "BSND" else a["query"].shape[:1]
    shape = (*rows, 1, a["sparse_count"])
    return np.full(shape, 0x5A5A5A5A, np.int32), np.full(shape, 3.5, np.float32)


@pytest.mark.parametrize("soc", SOCS)
def test_clean_data_pass_the_kernel_check_and_are_written(soc):
    """The correct twin: the same launch on valid data writes the outputs (as the host-checked run)."""
    a = args("BSND", "PA_BSND")
    indices, values = outputs(a)
    core.run_emu(**a, return_value=True, soc=soc, order="in_order", host_data_checks=False,
                 out_indices=indices, out_values=values)
    want, want_values, _ = core.run_emu(**a, return_value=True, soc=soc, order="in_order")
    assert indices.tobytes() == want.tobytes() and values.tobytes() == want_values.tobytes()
