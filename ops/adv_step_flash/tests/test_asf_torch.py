"""The PyTorch adapter of adv_step_flash: torch.ops.ascend_ops.advance_step_flashattn.

Exact comparisons against the NumPy golden reference in eager mode (every dtype combination of
the spec on every shape of asf_cases) and under torch.compile(fullgraph=True) (every dtype
combination, static shapes; dynamic shapes on a few), torch.library.opcheck, the bad-input
table (each a clear exception, the four outputs unchanged), a 64-step multi-step run, Meta /
FakeTensor with symbolic sizes (the torchair converter and the NPU adapter's compile check:
tests/test_torch_front_doors.py, for every op).
"""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("torch is not installed: the PyTorch adapter cannot be tested", allow_module_level=True)

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
from ascend_ops.adv_step_flash import reference, torch_ops  # noqa: E402  (loads _torch)

import torch  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

from asf_bad_cases import CASES as BAD_CASES, bad_args  # noqa: E402
from asf_cases import (  # noqa: E402
    ALL32, ALL64, DTYPE_COMBOS, NAMES, OUTPUTS, SHAPES, VLLM, Case, call_args, golden, make, param_ids, params,
)

OP = torch.ops.ascend_ops.advance_step_flashattn.default
SCHEMA = (
    "ascend_ops::advance_step_flashattn(SymInt num_seqs, SymInt num_queries, int block_size, Tensor(a!) input_tokens, "
    "Tensor sampled_token_ids, Tensor(b!) input_positions, Tensor(c!) seq_lens, Tensor(d!) slot_mapping, "
    "Tensor block_tables) -> ()"
)


def to_torch(args):
    """NumPy call arguments -> torch (tensors share the arrays' memory: the op writes the arrays)."""
    return tuple(torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args)


def check(fn, case: Case, combo, seed: int = 0) -> None:
    arrays, expected = golden(case, combo, seed)
    args = to_torch(call_args(case, arrays))
    sampled_before = args[4].clone()
    assert fn(*args) is None
    for name in OUTPUTS:
        got = arrays[name]
        assert got.dtype == expected[name].dtype, name
        np.testing.assert_array_equal(got, expected[name], err_msg=name)
    assert torch.equal(args[4], sampled_before), "sampled_token_ids was modified"


# --- schema -------------------------------------------------------------------------------
def test_schema_is_the_spec():
    schema = OP._schema
    assert str(schema) == SCHEMA
    writes = [a.name for a in schema.arguments if a.alias_info is not None and a.alias_info.is_write]
    assert writes == ["input_tokens", "input_positions", "seq_lens", "slot_mapping"]
    assert torch.Tag.pt2_compliant_tag in OP.tags


# --- eager --------------------------------------------------------------------------------
PAIRS = params()


@pytest.mark.parametrize("case,combo", PAIRS, ids=param_ids(PAIRS))
def test_eager_matches_reference(case, combo):
    check(OP, case, combo)


@pytest.mark.parametrize("entry", ["torch_ops", "package", "packet"])
def test_public_entries(entry):
    import ascend_ops.adv_step_flash as package

    fn = {
        "torch_ops": torch_ops.advance_step_flashattn,
        "package": package.advance_step_flashattn,
        "packet": torch.ops.ascend_ops.advance_step_flashattn,
    }[entry]
    check(fn, SHAPES[2], VLLM)


def test_written_tensors_get_a_new_version():
    arrays, _ = golden(SHAPES[2], VLLM)
    args = to_torch(call_args(SHAPES[2], arrays))
    tensors = dict(zip(NAMES, args[3:]))
    versions = {n: t._version for n, t in tensors.items()}
    OP(*args)
    for name, t in tensors.items():
        if name in OUTPUTS:
            assert t._version > versions[name], name
        else:
            assert t._version == versions[name], name


def test_inference_mode():
    with torch.inference_mode():
        check(OP, SHAPES[2], ALL32)
        arrays, _ = golden(SHAPES[2], ALL32)
        args = tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in to_torch(call_args(SHAPES[2], arrays)))
    # inference tensors may not be written outside inference mode: refused before any write
    before = [a.clone() for a in args[3:]]
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
        OP(*args)
    assert all(torch.equal(a, b) for a, b in zip(args[3:], before))


def test_multi_step_eager_and_compiled():
    """64 steps of advance on a 256-sequence batch match 64 steps of the reference."""
    steps = 64
    case = Case(256, 200, 16, span=500, table_pad=4, headroom=steps)
    torch._dynamo.reset()
    compiled = torch.compile(_step, fullgraph=True)
    for fn in (OP, compiled):
        arrays = make(case, VLLM, seed=21)
        want = {n: arrays[n].copy() for n in NAMES}
        args = list(to_torch(call_args(case, arrays)))
        rng = np.random.default_rng(22)
        for _ in range(steps):
            sampled = rng.integers(0, 152064, (case.num_queries, 1))
            args[4] = torch.from_numpy(sampled)
            want["sampled_token_ids"] = sampled
            fn(*args)
            want.update(reference.advance_step_flashattn(*call_args(case, want)))
        for name in OUTPUTS:
            np.testing.assert_array_equal(arrays[name], want[name], err_msg=name)


# --- torch.compile --------------------------------------------------------------------------
def _step(num_seqs, num_queries, block_size, input_tokens, sampled, input_positions, seq_lens, slot_mapping,
          block_tables):
    torch.ops.ascend_ops.advance_step_flashattn(num_seqs, num_queries, block_size, input_tokens, sampled,
                                                input_positions, seq_lens, slot_mapping, block_tables)


COMPILE_CASE = SHAPES[2]  # padding rows, strided block_tables


@pytest.mark.parametrize("combo", DTYPE_COMBOS, ids=param_ids([(COMPILE_CASE, c) for c in DTYPE_COMBOS]))
def test_compiled_matches_reference_every_dtype(combo):
    torch._dynamo.reset()
    check(torch.compile(_step, fullgraph=True), COMPILE_CASE, combo)


COMPILE_SHAPES = [SHAPES[1], SHAPES[3], SHAPES[6], SHAPES[7], SHAPES[8]]  # bs 1, bs 128, near / beyond 2^24


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("case,combo", params(COMPILE_SHAPES, [VLLM, ALL64]),
                         ids=param_ids(params(COMPILE_SHAPES, [VLLM, ALL64])))
def test_compiled_shapes(case, combo, dynamic):
    torch._dynamo.reset()
    check(torch.compile(_step, fullgraph=True, dynamic=dynamic), case, combo)


def test_dynamic_compile_serves_every_table_width():
    """Tensor sizes are symbolic under dynamic=True: one graph for tables of several widths
    (num_seqs / num_queries are ints of the schema, so they stay fixed here)."""
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(_step, fullgraph=True, dynamic=True)
    for span in (40, 90, 200, 333):
        check(compiled, Case(9, 7, 16, span=span, table_pad=3), VLLM, seed=span)
    assert counters["stats"]["unique_graphs"] == 1, dict(counters["stats"])


def test_compiled_in_a_graph_with_other_ops():
    """The writes are ordered with the ops around them: read-after-write in the same graph."""

    def step(sampled, tokens, positions, seq_lens, slots, tables):
        torch.ops.ascend_ops.advance_step_flashattn(6, 4, 16, tokens, sampled + 1, positions, seq_lens, slots, tables)
        return positions.sum() + seq_lens.sum() * 3 + slots.sum() * 7 + tokens.sum()

    torch._dynamo.reset()
    arrays = make(Case(6, 4, 16), VLLM)
    sampled = torch.from_numpy(arrays["sampled_token_ids"])
    eager = [torch.from_numpy(arrays[n].copy()) for n in NAMES if n != "sampled_token_ids"]
    comp = [torch.from_numpy(arrays[n].copy()) for n in NAMES if n != "sampled_token_ids"]
    want = step(sampled, *eager)
    got = torch.compile(step, fullgraph=True)(sampled, *comp)
    assert all(torch.equal(a, b) for a, b in zip(eager, comp))
    assert torch.equal(got, want)


# --- opcheck --------------------------------------------------------------------------------
@pytest.mark.parametrize("combo", [VLLM, ALL32, ALL64, ("int32", "int64", "int32", "int64", "int32", "int64")],
                         ids=lambda c: "".join("8" if d == "int64" else "4" for d in c))
@pytest.mark.parametrize("case", [Case(7, 5, 16, table_pad=3, headroom=16), Case(5, 5, 1, span=20, headroom=16,
                                                                                  sampled_2d=False)], ids=str)
def test_opcheck(case, combo):
    arrays = make(case, combo)
    torch.library.opcheck(OP, to_torch(call_args(case, arrays)))


# --- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("case_id,mutate,combo,exc,words", BAD_CASES, ids=[c[0] for c in BAD_CASES])
def test_bad_input_raises_and_leaves_outputs_untouched(case_id, mutate, combo, exc, words):
    args = to_torch(bad_args(mutate, combo))
    outputs = [args[3], args[5], args[6], args[7]]
    before = [t.clone() for t in outputs]
    with pytest.raises(exc) as info:
        OP(*args)
    message = str(info.value)
    assert "advance_step_flashattn: " in message, message
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"
    for t, old in zip(outputs, before):
        assert torch.equal(t, old), "an output changed although the call failed"


def _good():
    arrays = make(Case(6, 5, 16, span=40), VLLM, seed=1)
    return list(to_torch(call_args(Case(6, 5, 16, span=40), arrays)))


def test_torch_only_refusals():
    args = _good()
    args[3] = args[3].to(torch.complex64)
    with pytest.raises(TypeError, match=r"input_tokens has dtype torch\.complex64"):
        OP(*args)
    args = _good()
    args[8] = args[8].to("meta")
    with pytest.raises(ValueError, match=r"block_tables should be on the device of input_tokens \(cpu\)"):
        OP(*args)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_compiled_block_index_beyond_the_table_raises_index_error(dynamic):
    torch._dynamo.reset()
    compiled = torch.compile(_step, fullgraph=True, dynamic=dynamic)
    args = _good()
    compiled(*args)  # compile with good input first
    args[6][3] = 10_000  # seq_lens: block index 625 of a 3-wide table
    before = [args[i].clone() for i in (3, 5, 6, 7)]
    with pytest.raises(IndexError, match=r"block index 625 \(seq_lens\[3\] = 10000"):
        compiled(*args)
    assert all(torch.equal(args[i], b) for i, b in zip((3, 5, 6, 7), before))


def test_compiled_static_shape_error_is_caught_while_tracing():
    """Static sizes: the Meta kernel runs the host's validate() while tracing; dynamo reports
    the host's ValueError inside its TorchRuntimeError before anything runs."""
    torch._dynamo.reset()
    compiled = torch.compile(_step, fullgraph=True, dynamic=False)
    args = _good()
    args[5] = args[5][:5]
    before = [args[i].clone() for i in (3, 5, 6, 7)]
    with pytest.raises((ValueError, torch._dynamo.exc.TorchRuntimeError),
                       match=r"input_positions should be \[num_seqs\] = \[6\]"):
        compiled(*args)
    assert all(torch.equal(args[i], b) for i, b in zip((3, 5, 6, 7), before))


def test_compiled_dynamic_shape_error_is_a_value_error():
    """Symbolic sizes: the Meta kernel checks only the ints; the real kernel raises at run time."""
    torch._dynamo.reset()
    compiled = torch.compile(_step, fullgraph=True, dynamic=True)
    args = _good()
    compiled(*args)
    args[8] = torch.zeros(5, 3, dtype=args[8].dtype)
    before = [args[i].clone() for i in (3, 5, 6, 7)]
    with pytest.raises(ValueError, match=r"block_tables should be \[num_seqs, max_blocks_per_seq\]"):
        compiled(*args)
    assert all(torch.equal(args[i], b) for i, b in zip((3, 5, 6, 7), before))


# --- Meta and FakeTensor ----------------------------------------------------------------------
def test_meta_tensors():
    args = [a.to("meta") if isinstance(a, torch.Tensor) else a for a in _good()]
    assert OP(*args) is None
    bad = list(args)
    bad[8] = bad[8][:, :1].t()
    with pytest.raises(ValueError, match=r"block_tables should be"):
        OP(*bad)
    bad = list(args)
    bad[1] = 7
    with pytest.raises(ValueError, match=r"num_queries = 7 and num_seqs = 6"):
        OP(*bad)


def test_fake_tensor_mode():
    real = _good()
    with FakeTensorMode() as mode:
        fakes = [mode.from_tensor(t) if isinstance(t, torch.Tensor) else t for t in real]
        assert OP(*fakes) is None
        bad = list(fakes)
        bad[4] = torch.empty(9, dtype=torch.int64)
        with pytest.raises(ValueError, match=r"sampled_token_ids should be \[num_queries, 1\] or \[num_queries\]"):
            OP(*bad)


def test_fake_tensor_mode_with_symbolic_sizes_adds_no_guard():
    """Symbolic sizes: the Meta kernel must neither read a size (no guard) nor fail, and still
    checks the ints."""
    from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

    shape_env = ShapeEnv()
    real = _good()
    with FakeTensorMode(shape_env=shape_env) as mode:
        fakes = []
        for t in real:
            if isinstance(t, torch.Tensor):
                context = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC] * t.dim())
                t = mode.from_tensor(t, symbolic_context=context)
            fakes.append(t)
        assert not isinstance(fakes[3].shape[0], int)
        assert OP(*fakes) is None
        bad = list(fakes)
        bad[2] = 0
        with pytest.raises(ValueError, match=r"block_size should be > 0"):
            OP(*bad)
    assert not shape_env.guards, [str(g.expr) for g in shape_env.guards]
