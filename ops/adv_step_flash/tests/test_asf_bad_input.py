"""Every error of the spec through the NumPy front doors (cpu, emu): the documented exception,
a message naming the op and the argument, and all four outputs byte-for-byte unchanged."""
import numpy as np
import pytest

from ascend_ops.adv_step_flash import advance_step_flashattn, reference

from asf_bad_cases import CASES, base
from asf_cases import ALL32, NAMES, OUTPUTS


@pytest.mark.parametrize("backend", ["cpu", "emu"])
@pytest.mark.parametrize("case_id,mutate,combo,exc,words", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises_and_leaves_outputs_untouched(backend, case_id, mutate, combo, exc, words):
    args = mutate(base(combo))
    before = {n: np.ascontiguousarray(args[n]).copy() for n in OUTPUTS}
    with pytest.raises(exc) as info:
        advance_step_flashattn(args["num_seqs"], args["num_queries"], args["block_size"],
                               *(args[n] for n in NAMES), backend=backend)
    message = str(info.value)
    assert message.startswith("advance_step_flashattn:"), message
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"
    for name, old in before.items():
        np.testing.assert_array_equal(np.ascontiguousarray(args[name]).view(np.uint8), old.view(np.uint8), err_msg=name)


@pytest.mark.parametrize("case_id,mutate,combo,exc,words",
                         [c for c in CASES if c[0] in ("block-index-beyond-table", "negative-seq-len",
                                                       "negative-block-id", "int32-slot-overflow")],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_reference_refuses_the_same_data(case_id, mutate, combo, exc, words):
    args = mutate(base(combo))
    with pytest.raises(exc):
        reference.advance_step_flashattn(args["num_seqs"], args["num_queries"], args["block_size"],
                                         *(args[n] for n in NAMES))


@pytest.mark.parametrize("backend", ["cpu", "emu"])
def test_padding_rows_are_not_checked(backend):
    """Rows num_queries <= i < num_seqs are never read: garbage there is no error."""
    args = base(ALL32)
    args["seq_lens"][7] = -3
    args["block_tables"][6] = -1
    want = reference.advance_step_flashattn(*(args[k] for k in ("num_seqs", "num_queries", "block_size")),
                                            *(args[n] for n in NAMES))
    advance_step_flashattn(*(args[k] for k in ("num_seqs", "num_queries", "block_size")),
                           *(args[n] for n in NAMES), backend=backend)
    for name in OUTPUTS:
        np.testing.assert_array_equal(args[name], want[name])
    assert args["seq_lens"][7] == -3


@pytest.mark.parametrize("backend", ["cpu", "emu"])
def test_non_native_byte_order_is_refused(backend):
    """NumPy only: torch and MindSpore refuse such arrays themselves."""
    args = base()
    args["seq_lens"] = args["seq_lens"].astype(args["seq_lens"].dtype.newbyteorder(">"))
    before = {n: args[n].copy() for n in OUTPUTS}
    with pytest.raises(TypeError, match="advance_step_flashattn: seq_lens should be in the machine's byte order"):
        advance_step_flashattn(*(args[k] for k in ("num_seqs", "num_queries", "block_size")),
                               *(args[n] for n in NAMES), backend=backend)
    for name, old in before.items():
        assert args[name].tobytes() == old.tobytes(), name


def test_read_only_output_is_refused():
    args = base()
    args["slot_mapping"].setflags(write=False)
    with pytest.raises(ValueError, match="slot_mapping .*read-only"):
        advance_step_flashattn(*(args[k] for k in ("num_seqs", "num_queries", "block_size")),
                               *(args[n] for n in NAMES))


def test_unknown_backend_and_foreign_type():
    args = base()
    rest = [args[n] for n in NAMES]
    with pytest.raises(ValueError, match="backend"):
        advance_step_flashattn(8, 6, 16, *rest, backend="gpu")
    with pytest.raises(TypeError, match="input_tokens should be"):
        advance_step_flashattn(8, 6, 16, [1], *rest[1:])
