"""adv_step_flash with MindSpore tensors: PyNative, ms.jit and GRAPH_MODE Cells.

Every result is compared exactly with the NumPy reference on the shared cases of asf_cases.
Bad inputs must raise the right exception naming the argument and leave all four outputs
unchanged. Built-in ops must see the four writes in program order (race test).
"""
from __future__ import annotations

import numpy as np
import pytest

ms = pytest.importorskip("mindspore", reason="mindspore is not installed")  # before the adapter
from mindspore import Parameter, Tensor, mint, nn  # noqa: E402

from ascend_ops.common import check_errors  # noqa: E402

from ascend_ops.devkit import reliability  # noqa: E402
from ascend_ops.devkit.testing import ms_synchronize  # noqa: E402
import ascend_ops.adv_step_flash as asf  # noqa: E402
from ascend_ops.adv_step_flash import ms as asf_ms  # noqa: E402
from ascend_ops.adv_step_flash import reference  # noqa: E402
from asf_bad_cases import CASES as BAD_CASES, bad_args  # noqa: E402
from asf_cases import (  # noqa: E402
    ALL32, ALL64, DTYPE_COMBOS, NAMES, OUTPUTS, SHAPES, VLLM, Case, call_args, golden, make, param_ids, params,
)

# PyNative: every dtype combination on the shapes with tables of a few MB at most; the shapes
# at and beyond 2^24 (tables of up to hundreds of MB of zero pages, which MindSpore would copy)
# with the dtype sets callers use.
SMALL = [c for c in SHAPES if c.max_blocks * c.num_seqs <= 1 << 20]
LARGE = [SHAPES[6], SHAPES[7], SHAPES[8]]
PYNATIVE_PAIRS = params(SMALL) + params(LARGE, [VLLM, ALL32, ALL64])
GRAPH_CASE = Case(7, 5, 16, span=60)  # padding rows; graph tensors are contiguous


@pytest.fixture(autouse=True)
def _pynative_and_tmp_cwd(tmp_path, monkeypatch):
    """Each test starts in PyNative; MindSpore's compile reports (analyze_fail.ir) go to tmp."""
    monkeypatch.chdir(tmp_path)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


def _table(array):
    """block_tables as MindSpore sees it: a strided view when the NumPy array is one."""
    if array.flags.c_contiguous:
        return Tensor(array)
    base = array.base if array.base is not None and array.base.ndim == 2 else None
    if base is None or array.strides[1] != array.itemsize:
        return Tensor(np.ascontiguousarray(array))
    offset = (array.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // array.itemsize
    view = Tensor(base)[:, offset:offset + array.shape[1]]
    assert view.stride()[0] == base.shape[1]
    return view


def _tensors(arrays, cache_type=Tensor):
    out = []
    for name in NAMES:
        if name == "block_tables":
            out.append(_table(arrays[name]))
        elif name in OUTPUTS and cache_type is Parameter:
            out.append(Parameter(Tensor(arrays[name]), name=name))
        else:
            out.append(Tensor(arrays[name]))
    return out


def _assert_outputs(tensors, expected):
    for name, t in zip(NAMES, tensors):
        if name in OUTPUTS:
            np.testing.assert_array_equal(t.asnumpy(), expected[name], err_msg=name)


# --- PyNative --------------------------------------------------------------------------------


@pytest.mark.parametrize("case,combo", PYNATIVE_PAIRS, ids=param_ids(PYNATIVE_PAIRS))
def test_pynative_matches_reference(case, combo):
    # Through the public API, which hands MindSpore tensors to ascend_ops.adv_step_flash.ms.
    arrays, expected = golden(case, combo)
    tensors = _tensors(arrays)
    assert asf.advance_step_flashattn(case.num_seqs, case.num_queries, case.block_size, *tensors) is None
    _assert_outputs(tensors, expected)


def test_pynative_parameters():
    arrays, expected = golden(SHAPES[4], ALL32, seed=1)
    tensors = _tensors(arrays, cache_type=Parameter)
    asf_ms.advance_step_flashattn(SHAPES[4].num_seqs, SHAPES[4].num_queries, SHAPES[4].block_size, *tensors)
    _assert_outputs(tensors, expected)


def test_pynative_inputs_from_pending_ops():
    # Every tensor is the output of a built-in op issued just before (async stub tensors): the
    # data check must see their final values.
    case = SHAPES[4]
    arrays, _ = golden(case, VLLM, seed=3)
    tensors = [t + 0 for t in _tensors(arrays)]
    tensors[3] = tensors[3] + 1  # seq_lens advanced by a built-in op first
    moved = {n: a.copy() for n, a in arrays.items()}
    moved["seq_lens"] = moved["seq_lens"] + 1
    expected = reference.advance_step_flashattn(*call_args(case, moved))
    asf_ms.advance_step_flashattn(case.num_seqs, case.num_queries, case.block_size, *tensors)
    _assert_outputs(tensors, expected)


def test_pynative_multi_step():
    """64 steps of advance on a 256-sequence batch match 64 steps of the reference."""
    steps = 64
    case = Case(256, 200, 16, span=500, headroom=steps)
    arrays = make(case, ALL32, seed=31)
    want = {n: arrays[n].copy() for n in NAMES}
    tensors = _tensors(arrays)
    rng = np.random.default_rng(32)
    for _ in range(steps):
        sampled = rng.integers(0, 152064, (case.num_queries, 1)).astype(np.int32)
        tensors[1] = Tensor(sampled)
        want["sampled_token_ids"] = sampled
        asf_ms.advance_step_flashattn(case.num_seqs, case.num_queries, case.block_size, *tensors)
        want.update(reference.advance_step_flashattn(*call_args(case, want)))
    _assert_outputs(tensors, want)


def test_eager_call_under_graph_mode_context():
    # Outside a Cell / jit the call is eager even when the context says GRAPH_MODE.
    arrays, expected = golden(GRAPH_CASE, VLLM, seed=5)
    tensors = _tensors(arrays)
    ms.set_context(mode=ms.GRAPH_MODE)
    asf_ms.advance_step_flashattn(GRAPH_CASE.num_seqs, GRAPH_CASE.num_queries, GRAPH_CASE.block_size, *tensors)
    _assert_outputs(tensors, expected)


# --- Graph mode ------------------------------------------------------------------------------


def _jit_step(num_seqs, num_queries, block_size):
    @ms.jit
    def step(input_tokens, sampled, input_positions, seq_lens, slot_mapping, block_tables):
        asf_ms.advance_step_flashattn(num_seqs, num_queries, block_size, input_tokens, sampled, input_positions,
                                      seq_lens, slot_mapping, block_tables)
        # built-in ops reading the outputs after the write
        return seq_lens * 1, slot_mapping * 1

    return step


@pytest.mark.parametrize("combo", DTYPE_COMBOS, ids=param_ids([(GRAPH_CASE, c) for c in DTYPE_COMBOS]))
def test_jit_function_every_dtype(combo):
    arrays, expected = golden(GRAPH_CASE, combo, seed=6)
    tensors = _tensors(arrays)
    lens, slots = _jit_step(GRAPH_CASE.num_seqs, GRAPH_CASE.num_queries, GRAPH_CASE.block_size)(*tensors)
    _assert_outputs(tensors, expected)
    np.testing.assert_array_equal(lens.asnumpy(), expected["seq_lens"])
    np.testing.assert_array_equal(slots.asnumpy(), expected["slot_mapping"])


GRAPH_SHAPES = [SHAPES[1], SHAPES[3], SHAPES[7], SHAPES[8]]  # bs 1, bs 128, beyond 2^24, beyond int32


@pytest.mark.parametrize("case,combo", params(GRAPH_SHAPES, [VLLM, ALL64]),
                         ids=param_ids(params(GRAPH_SHAPES, [VLLM, ALL64])))
def test_jit_function_shapes(case, combo):
    arrays, expected = golden(case, combo, seed=7)
    arrays["block_tables"] = np.ascontiguousarray(arrays["block_tables"])
    tensors = _tensors(arrays)
    _jit_step(case.num_seqs, case.num_queries, case.block_size)(*tensors)
    _assert_outputs(tensors, expected)


class _Advance(nn.Cell):
    """A multi-step runner's metadata as Parameters, advanced in place each step."""

    def __init__(self, case, arrays):
        super().__init__()
        self.case = case
        self.input_tokens = Parameter(Tensor(arrays["input_tokens"]), name="input_tokens")
        self.input_positions = Parameter(Tensor(arrays["input_positions"]), name="input_positions")
        self.seq_lens = Parameter(Tensor(arrays["seq_lens"]), name="seq_lens")
        self.slot_mapping = Parameter(Tensor(arrays["slot_mapping"]), name="slot_mapping")
        self.advance = asf_ms.AdvanceStepFlashattn()

    def construct(self, sampled, block_tables):
        self.advance(self.case.num_seqs, self.case.num_queries, self.case.block_size, self.input_tokens, sampled,
                     self.input_positions, self.seq_lens, self.slot_mapping, block_tables)
        return self.seq_lens * 1


@pytest.mark.parametrize("combo", [VLLM, ALL32], ids=param_ids([(GRAPH_CASE, c) for c in (VLLM, ALL32)]))
def test_graph_mode_cell_multi_step(combo):
    """64 steps of a GRAPH_MODE Cell on a 256-sequence batch (one compiled graph) match 64
    steps of the reference."""
    ms.set_context(mode=ms.GRAPH_MODE)
    steps = 64
    case = Case(256, 200, 16, span=500, headroom=steps)
    arrays = make(case, combo, seed=41)
    arrays["block_tables"] = np.ascontiguousarray(arrays["block_tables"])
    want = {n: arrays[n].copy() for n in NAMES}
    net = _Advance(case, arrays)
    tables = Tensor(arrays["block_tables"])
    rng = np.random.default_rng(42)
    for _ in range(steps):
        sampled = rng.integers(0, 152064, (case.num_queries, 1)).astype(arrays["sampled_token_ids"].dtype)
        want["sampled_token_ids"] = sampled
        out = net(Tensor(sampled), tables)
        want.update(reference.advance_step_flashattn(*call_args(case, want)))
        np.testing.assert_array_equal(out.asnumpy(), want["seq_lens"])
    for name in OUTPUTS:
        np.testing.assert_array_equal(getattr(net, name).asnumpy(), want[name], err_msg=name)


# --- Bad inputs ------------------------------------------------------------------------------


def _bad_tensors(mutate, combo):
    args = bad_args(mutate, combo)
    arrays = [np.ascontiguousarray(a) for a in args[3:]]
    return args[:3], arrays, [Tensor(a) for a in arrays]


def _assert_unchanged(arrays, tensors):
    for name, array, tensor in zip(NAMES, arrays, tensors):
        if name in OUTPUTS:
            assert tensor.asnumpy().tobytes() == array.tobytes(), name


# MindSpore tensors are made from contiguous copies: the NumPy layout cases do not apply.
PYNATIVE_BAD = [c for c in BAD_CASES if "strided" not in c[0]]


@pytest.mark.parametrize("case_id,mutate,combo,exc,words", PYNATIVE_BAD, ids=[c[0] for c in PYNATIVE_BAD])
def test_pynative_bad_inputs(case_id, mutate, combo, exc, words):
    ints, arrays, tensors = _bad_tensors(mutate, combo)
    with pytest.raises(exc) as info:
        asf.advance_step_flashattn(*ints, *tensors)
        ms_synchronize()  # data is checked in MindSpore's queue: raised at its next sync
    message = str(info.value)
    assert message.startswith("advance_step_flashattn: "), message
    for word in words:
        assert word in message, message
    _assert_unchanged(arrays, tensors)


DATA_ERRORS = ["block-index-beyond-table", "negative-seq-len", "negative-block-id", "int32-slot-overflow"]


@pytest.mark.parametrize("case_id", DATA_ERRORS)
def test_pynative_bad_data_raises_late_once(case_id):
    """Data errors leave the call, then raise once at MindSpore's next sync, outputs untouched."""
    _, mutate, combo, exc, words = next(c for c in BAD_CASES if c[0] == case_id)
    ints, arrays, tensors = _bad_tensors(mutate, combo)
    asf.advance_step_flashattn(*ints, *tensors)  # returns: the data is not checked yet
    with pytest.raises(exc) as info:
        ms_synchronize()
    for word in ["advance_step_flashattn: "] + words:
        assert word in str(info.value), str(info.value)
    _assert_unchanged(arrays, tensors)
    ms_synchronize()
    check_errors()


def test_pynative_non_contiguous_output_rejected():
    arrays, _ = golden(GRAPH_CASE, VLLM)
    tensors = _tensors(arrays)
    tensors[2] = Tensor(np.zeros(14, np.int64))[::2]
    assert not tensors[2].is_contiguous()
    with pytest.raises(ValueError, match=r"input_positions is written in place and should be contiguous"):
        asf_ms.advance_step_flashattn(7, 5, 16, *tensors)


# Graph mode: what the compiler knows (ints, shapes, dtypes) fails at compile time with the
# PyNative exception; what needs the data fails when the graph runs, as RuntimeError with ours.
COMPILE_TIME = ["num-queries-beyond-num-seqs", "block-size-zero", "input_tokens-short", "sampled-two-columns",
                "block_tables-rows", "input_tokens-float", "seq_lens-uint8"]
RUN_TIME = DATA_ERRORS
BY_ID = {c[0]: c for c in BAD_CASES}


@pytest.mark.parametrize("case_id", COMPILE_TIME)
def test_jit_bad_inputs_at_compile_time(case_id):
    _, mutate, combo, exc, words = BY_ID[case_id]
    ints, arrays, tensors = _bad_tensors(mutate, combo)
    with pytest.raises(exc) as info:
        outs = _jit_step(*ints)(*tensors)
        [o.asnumpy() for o in outs]
    for word in ["advance_step_flashattn: "] + words:
        assert word in str(info.value), str(info.value)
    _assert_unchanged(arrays, tensors)


@pytest.mark.parametrize("case_id", RUN_TIME)
def test_jit_bad_data_fails_at_run_time(case_id):
    _, mutate, combo, exc, words = BY_ID[case_id]
    ints, arrays, tensors = _bad_tensors(mutate, combo)
    with pytest.raises(RuntimeError, match=rf"{exc.__name__}: advance_step_flashattn: ") as info:
        outs = _jit_step(*ints)(*tensors)
        [o.asnumpy() for o in outs]  # the graph runs asynchronously: its error surfaces here
    for word in words:
        assert word in str(info.value), str(info.value)
    _assert_unchanged(arrays, tensors)


# --- Ordering with MindSpore's own ops -------------------------------------------------------

RACE_ITERATIONS = 2000


def test_ordering_with_builtin_ops():
    """Built-in ops issued right after the custom op must see all four writes, and the custom
    op must see a built-in write to seq_lens issued right before it (tiny tensors: the race
    window is widest)."""
    tables = Tensor(np.array([[3, 5]], np.int32))
    sampled = Tensor(np.array([[11]], np.int64))
    stale_reads, lost_writes = 0, 0
    for i in range(RACE_ITERATIONS):
        pos = i % 31
        tokens = mint.zeros((1,), dtype=ms.int64)  # outputs of pending built-in ops
        positions = mint.zeros((1,), dtype=ms.int64)
        slots = mint.zeros((1,), dtype=ms.int64)
        seq_lens = Tensor(np.array([pos], np.int32)) + 0
        asf_ms.advance_step_flashattn(1, 1, 16, tokens, sampled, positions, seq_lens, slots, tables)
        read = (tokens * 1, positions * 1, seq_lens * 1, slots * 1)  # built-in reads right after
        want = (11, pos, pos + 1, (3 if pos < 16 else 5) * 16 + pos % 16)
        if tuple(int(r.asnumpy()[0]) for r in read) != want:
            stale_reads += 1
        seq_lens.copy_(Tensor(np.array([17], np.int32)))  # built-in write right before ours
        asf_ms.advance_step_flashattn(1, 1, 16, tokens, sampled, positions, seq_lens, slots, tables)
        if int((slots + 0).asnumpy()[0]) != 5 * 16 + 1 or int((seq_lens + 0).asnumpy()[0]) != 18:
            lost_writes += 1
    reliability.record("race", "adv_step_flash", iterations=RACE_ITERATIONS, stale_reads=stale_reads,
                       lost_writes=lost_writes)
    assert (stale_reads, lost_writes) == (0, 0)
