"""The PyTorch adapter of reshape_and_cache: torch.ops.ascend_ops.reshape_and_cache.

Exact comparisons against the NumPy golden reference (the op is a bit copy) in eager mode and
under torch.compile(fullgraph=True) with static and dynamic shapes, torch.library.opcheck,
errors that name the argument and leave the caches untouched, Meta / FakeTensor, the torchair
converter's refusal of the forms its GE prototype lacks (the rest of the torchair converter and
the NPU adapter's compile check: tests/test_torch_front_doors.py, for every op).
"""
from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from typing import Callable, Tuple

import numpy as np
import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("torch is not installed: the PyTorch adapter cannot be tested", allow_module_level=True)

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
from ascend_ops.devkit import torchair_testing  # noqa: E402
from ascend_ops.reshape_and_cache import reference, torch_ops  # noqa: E402  (loads _torch)

import torch  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

OP = torch.ops.ascend_ops.reshape_and_cache.default
SCHEMA = (
    "ascend_ops::reshape_and_cache(Tensor key, Tensor? value, Tensor(a!) key_cache, "
    "Tensor(b!)? value_cache, Tensor slot_mapping, int cache_mode=0, int? head_num=None, *, "
    "str kv_cache_dtype=\"auto\", Tensor? k_scale=None, Tensor? v_scale=None, Tensor? k_offset=None, "
    "Tensor? v_offset=None) -> ()"
)

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.int8]
SLOT_DTYPES = [torch.int32, torch.int64]
# Same-size integer type used to compare bit patterns exactly (NumPy has no bfloat16).
_BITS = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


@dataclass(frozen=True)
class Case:
    """One shape of the op. `written` is T' (slot_mapping length), `pad` the padding slots."""

    tokens: int  # T
    written: int  # T' <= T
    heads: int  # H
    dk: int
    dv: int
    num_blocks: int
    block_size: int
    qkv: bool = False  # key / value are strided views of one fused [T, 3H, D] tensor
    pad: int = 0  # how many of the T' slots are -1

    def __str__(self) -> str:
        return (f"T{self.tokens}w{self.written}H{self.heads}k{self.dk}v{self.dv}"
                f"b{self.num_blocks}x{self.block_size}{'qkv' if self.qkv else ''}p{self.pad}")


CASES = [
    Case(1, 1, 1, 16, 16, 1, 1),  # one token, one slot
    Case(7, 7, 3, 5, 3, 4, 2),  # odd sizes, Dk != Dv
    Case(19, 13, 2, 64, 32, 5, 16, pad=4),  # T' < T, padding, Dk != Dv
    Case(33, 33, 4, 128, 128, 3, 16, qkv=True, pad=3),  # strided rows of a fused qkv tensor
    Case(12, 9, 8, 96, 64, 7, 4, qkv=True),  # qkv views with Dk != Dv, T' < T
    Case(5, 0, 2, 8, 8, 2, 4),  # T' = 0: nothing is written
    Case(300, 290, 8, 128, 64, 40, 16, pad=17),  # large enough for the multi-threaded path
]


def make_tensors(case: Case, dtype: torch.dtype, slot_dtype: torch.dtype, seed: int = 0):
    """key, value, key_cache, value_cache, slot_mapping for `case` (distinct slots, seeded)."""
    gen = torch.Generator().manual_seed(seed)

    def data(*shape: int) -> torch.Tensor:
        if dtype.is_floating_point:
            return torch.randn(*shape, generator=gen).to(dtype)
        return torch.randint(-128, 128, shape, generator=gen, dtype=torch.int64).to(dtype)

    t, h = case.tokens, case.heads
    if case.qkv:  # one fused [T, H*(Dk + Dk + Dv)] projection: q | k | v, rows W apart
        fused = data(t, h * (2 * case.dk + case.dv))
        key = fused[:, h * case.dk:2 * h * case.dk].view(t, h, case.dk)
        value = fused[:, 2 * h * case.dk:].view(t, h, case.dv)
    else:
        key, value = data(t, h, case.dk), data(t, h, case.dv)
    key_cache = data(case.num_blocks, case.block_size, h, case.dk)
    value_cache = data(case.num_blocks, case.block_size, h, case.dv)
    slots = torch.randperm(case.num_blocks * case.block_size, generator=gen)[:case.written]
    if case.pad:
        slots[torch.randperm(case.written, generator=gen)[:case.pad]] = -1
    return key, value, key_cache, value_cache, slots.to(slot_dtype)


def bits(t: torch.Tensor) -> np.ndarray:
    """The tensor's bit patterns as a NumPy array of the same shape and strides."""
    return t.view(_BITS[t.element_size()]).numpy()


def expected(key, value, key_cache, value_cache, slots) -> Tuple[np.ndarray, np.ndarray]:
    return reference.reshape_and_cache(bits(key), bits(value), bits(key_cache), bits(value_cache),
                                       slots.numpy())


def assert_same_bits(actual: torch.Tensor, want: np.ndarray, name: str) -> None:
    got = bits(actual)
    if not np.array_equal(got, want):
        bad = np.argwhere(got != want)
        raise AssertionError(f"{name}: {len(bad)} elements differ, first at {bad[0].tolist()}")


def run_and_check(fn: Callable, case: Case, dtype: torch.dtype, slot_dtype: torch.dtype,
                  seed: int = 0) -> None:
    key, value, key_cache, value_cache, slots = make_tensors(case, dtype, slot_dtype, seed)
    key_before, value_before = key.clone(), value.clone()
    want_k, want_v = expected(key, value, key_cache, value_cache, slots)
    assert fn(key, value, key_cache, value_cache, slots) is None
    assert_same_bits(key_cache, want_k, "key_cache")
    assert_same_bits(value_cache, want_v, "value_cache")
    assert torch.equal(key, key_before) and torch.equal(value, value_before), "inputs were modified"


# --- schema -------------------------------------------------------------------------------
def test_schema_is_the_spec():
    schema = OP._schema
    assert str(schema) == SCHEMA
    writes = [a.name for a in schema.arguments if a.alias_info is not None and a.alias_info.is_write]
    assert writes == ["key_cache", "value_cache"]
    assert torch.Tag.pt2_compliant_tag in OP.tags


# --- eager --------------------------------------------------------------------------------
@pytest.mark.parametrize("slot_dtype", SLOT_DTYPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_eager_matches_reference(case, dtype, slot_dtype):
    run_and_check(OP, case, dtype, slot_dtype)


@pytest.mark.parametrize("entry", ["torch_ops", "package", "packet"])
def test_public_entries(entry):
    import ascend_ops.reshape_and_cache as package

    fn = {
        "torch_ops": torch_ops.reshape_and_cache,
        "package": package.reshape_and_cache,
        "packet": torch.ops.ascend_ops.reshape_and_cache,
    }[entry]
    run_and_check(fn, CASES[2], torch.bfloat16, torch.int64)


def test_qkv_views_are_not_copied():
    """Strided key / value rows go to the kernel as they are (no hidden .contiguous())."""
    key, value, key_cache, value_cache, slots = make_tensors(CASES[3], torch.float16, torch.int32)
    assert not key.is_contiguous() and key.stride(0) == 3 * key.size(1) * key.size(2)
    assert key.data_ptr() != value.data_ptr() and key.untyped_storage().data_ptr() == value.untyped_storage().data_ptr()
    want_k, want_v = expected(key, value, key_cache, value_cache, slots)
    OP(key, value, key_cache, value_cache, slots)
    assert_same_bits(key_cache, want_k, "key_cache")
    assert_same_bits(value_cache, want_v, "value_cache")


def test_lazily_negated_key_is_resolved_by_torch():
    """torch resolves a _neg_view input before the kernel: the cache gets the negated rows."""
    key, value, key_cache, value_cache, slots = make_tensors(CASES[1], torch.float32, torch.int64)
    want_k, want_v = expected(-key, value, key_cache, value_cache, slots)
    OP(torch._neg_view(key), value, key_cache, value_cache, slots)
    assert_same_bits(key_cache, want_k, "key_cache")
    assert_same_bits(value_cache, want_v, "value_cache")


def test_written_caches_get_a_new_version():
    """Like every torch in-place op: autograd and torch's checks see the write."""
    key, value, key_cache, value_cache, slots = _good()
    versions = key_cache._version, value_cache._version, key._version
    OP(key, value, key_cache, value_cache, slots)
    assert key_cache._version > versions[0] and value_cache._version > versions[1]
    assert key._version == versions[2]


def test_inference_mode():
    with torch.inference_mode():
        run_and_check(OP, CASES[2], torch.float16, torch.int32)
        args = _good()
    # inference tensors may not be written outside inference mode: refused before any write
    before = [a.clone() for a in args]
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
        OP(*_good()[:2], *args[2:4], args[4])
    assert all(torch.equal(a, b) for a, b in zip(args, before))


# --- torch.compile --------------------------------------------------------------------------
def _step(key, value, key_cache, value_cache, slots):
    torch.ops.ascend_ops.reshape_and_cache(key, value, key_cache, value_cache, slots)


COMPILE_CASES = [
    (CASES[1], torch.float32, torch.int64),
    (CASES[2], torch.float16, torch.int32),
    (CASES[3], torch.bfloat16, torch.int64),
    (CASES[4], torch.int8, torch.int32),
]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("case,dtype,slot_dtype", COMPILE_CASES, ids=lambda v: str(v))
def test_compiled_matches_reference(case, dtype, slot_dtype, dynamic):
    torch._dynamo.reset()
    compiled = torch.compile(_step, fullgraph=True, dynamic=dynamic)
    run_and_check(compiled, case, dtype, slot_dtype)


def test_dynamic_compile_serves_every_token_count():
    """One graph for T = 5, 9, 14, 23 (sizes chosen so no two dims coincide at the first call)."""
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(_step, fullgraph=True, dynamic=True)
    for tokens in (5, 9, 14, 23):
        case = Case(tokens, tokens - 2, 4, 24, 40, 11, 6, pad=1)
        run_and_check(compiled, case, torch.float16, torch.int64, seed=tokens)
    assert counters["stats"]["unique_graphs"] == 1, dict(counters["stats"])


def test_compiled_in_a_graph_with_other_ops():
    """The write is ordered with the ops around it: read-after-write in the same graph."""

    def step(qkv, key_cache, value_cache, slots):
        h = qkv.size(1) // 3
        key, value = qkv[:, h:2 * h], qkv[:, 2 * h:]
        torch.ops.ascend_ops.reshape_and_cache(key * 2, value, key_cache, value_cache, slots)
        return key_cache.sum() + value_cache[0].sum()

    torch._dynamo.reset()
    qkv = torch.randn(6, 6, 8, generator=torch.Generator().manual_seed(0))
    slots = torch.tensor([3, 0, -1, 7, 5, 1])
    caches = [torch.zeros(2, 4, 2, 8) for _ in range(4)]
    want = step(qkv, caches[0], caches[1], slots)
    got = torch.compile(step, fullgraph=True)(qkv, caches[2], caches[3], slots)
    assert torch.equal(caches[0], caches[2]) and torch.equal(caches[1], caches[3])
    # Inductor may sum the 128 float32 values in another order than eager: a few ulps of the sums.
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


# --- opcheck --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "case,dtype,slot_dtype",
    [
        (CASES[1], torch.float32, torch.int64),
        (CASES[3], torch.bfloat16, torch.int32),  # qkv views, padding
        (CASES[2], torch.int8, torch.int64),  # T' < T, Dk != Dv
    ],
    ids=lambda v: str(v),
)
def test_opcheck(case, dtype, slot_dtype):
    args = make_tensors(case, dtype, slot_dtype)
    torch.library.opcheck(OP, args)


# --- errors ---------------------------------------------------------------------------------
def _good():
    return make_tensors(Case(6, 5, 2, 8, 4, 3, 4), torch.float16, torch.int32, seed=1)


def _with(**changes):
    def build():
        names = ("key", "value", "key_cache", "value_cache", "slot_mapping")
        args = dict(zip(names, _good()))
        for name, change in changes.items():
            args[name] = change(args[name])
        return [args[n] for n in names]

    return build


# (id, builder, exception, pattern the message must match)
BAD_INPUTS = [
    ("key-float64", _with(key=lambda t: t.double()), TypeError, r"key should have dtype"),
    ("key-complex", _with(key=lambda t: t.to(torch.complex64)), TypeError, r"key has dtype torch\.complex64"),
    ("value-dtype", _with(value=lambda t: t.float()), TypeError, r"value should have dtype float16"),
    ("key_cache-dtype", _with(key_cache=lambda t: t.bfloat16()), TypeError, r"key_cache should have dtype"),
    ("slots-float", _with(slot_mapping=lambda t: t.float()), TypeError, r"slot_mapping should have dtype int32 or int64"),
    ("key-rank", _with(key=lambda t: t[0]), ValueError, r"key should be \[T, H, Dk\]"),
    ("value-heads", _with(value=lambda t: t[:, :1]), ValueError, r"value should be .*H \(from key\)"),
    ("value-tokens", _with(value=lambda t: t[:4]), ValueError, r"value should be .*T \(from key\)"),
    ("key_cache-dk", _with(key_cache=lambda t: t[..., :4].contiguous()), ValueError, r"key_cache should be .*Dk"),
    ("value_cache-blocks", _with(value_cache=lambda t: t[:2].contiguous()), ValueError, r"value_cache should be .*num_blocks"),
    ("value_cache-dv", _with(value_cache=lambda t: torch.zeros(3, 4, 2, 6, dtype=t.dtype)), ValueError, r"value_cache should be .*Dv"),
    ("slots-too-many", _with(slot_mapping=lambda t: torch.arange(7, dtype=t.dtype)), ValueError, r"slot_mapping should be \[T'\] with T' <= T"),
    ("slots-rank", _with(slot_mapping=lambda t: t.view(5, 1)), ValueError, r"slot_mapping should be \[T'\]"),
    # a permuted [num_blocks, block_size] cache is a valid strided cache now; a strided last dim is not
    ("key_cache-strided", _with(key_cache=lambda t: torch.zeros(3, 4, 2, 16, dtype=t.dtype)[..., ::2]), ValueError, r"key_cache should be contiguous"),
    ("value_cache-strided", _with(value_cache=lambda t: torch.zeros(3, 4, 2, 8, dtype=t.dtype)[..., ::2]), ValueError, r"value_cache should be contiguous"),
    ("key-inner-strided", _with(key=lambda t: torch.zeros(6, 2, 16, dtype=t.dtype)[..., ::2]), ValueError, r"key should have contiguous \[H, D\] rows"),
    ("slot-out-of-range", _with(slot_mapping=lambda t: torch.tensor([0, 5, 12, 1], dtype=t.dtype)), IndexError, r"slot_mapping\[2\] = 12 is out of range"),
    ("slot-far-out", _with(slot_mapping=lambda t: torch.tensor([3, 2**40], dtype=torch.int64)), IndexError, r"slot_mapping\[1\] = 1099511627776"),
    ("device-meta-cache", _with(key_cache=lambda t: t.to("meta")), ValueError, r"device"),
]


@pytest.mark.parametrize("build,exc,pattern", [b[1:] for b in BAD_INPUTS], ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_raises_and_leaves_caches_untouched(build, exc, pattern):
    args = build()
    before = [a.clone() if a.device.type == "cpu" else None for a in args]
    with pytest.raises(exc, match=pattern) as info:
        OP(*args)
    assert "reshape_and_cache" in str(info.value)
    for arg, old in zip(args, before):
        if old is not None:
            assert torch.equal(arg, old), "an argument changed although the call failed"


def test_bad_input_raises_through_the_public_wrapper():
    key, value, key_cache, value_cache, slots = _good()
    with pytest.raises(IndexError, match=r"slot_mapping\[0\] = 99"):
        torch_ops.reshape_and_cache(key, value, key_cache, value_cache, torch.tensor([99]))


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_compiled_slot_out_of_range_raises_index_error(dynamic):
    torch._dynamo.reset()
    compiled = torch.compile(_step, fullgraph=True, dynamic=dynamic)
    key, value, key_cache, value_cache, slots = _good()
    compiled(key, value, key_cache, value_cache, slots)  # compile with good input first
    kc, vc = key_cache.clone(), value_cache.clone()
    bad = torch.tensor([0, 1, 2, 12, 3], dtype=torch.int32)
    with pytest.raises(IndexError, match=r"slot_mapping\[3\] = 12"):
        compiled(key, value, key_cache, value_cache, bad)
    assert torch.equal(key_cache, kc) and torch.equal(value_cache, vc)


def test_compiled_dynamic_shape_error_is_a_value_error():
    """With symbolic sizes the Meta kernel checks nothing; the real kernel raises at run time."""
    torch._dynamo.reset()
    compiled = torch.compile(_step, fullgraph=True, dynamic=True)
    key, value, key_cache, value_cache, slots = _good()
    compiled(key, value, key_cache, value_cache, slots)
    kc, vc = key_cache.clone(), value_cache.clone()
    with pytest.raises(ValueError, match=r"value should be .*H \(from key\)"):
        compiled(key, torch.zeros(6, 3, 4, dtype=value.dtype), key_cache, value_cache, slots)
    assert torch.equal(key_cache, kc) and torch.equal(value_cache, vc)


def test_compiled_static_shape_error_is_caught_while_tracing():
    """With static sizes the Meta kernel runs the host's validate(): dynamo reports the host's
    ValueError inside its TorchRuntimeError (as for any op whose fake kernel raises) before
    anything runs."""
    torch._dynamo.reset()
    compiled = torch.compile(_step, fullgraph=True, dynamic=False)
    key, value, key_cache, value_cache, slots = _good()
    kc, vc = key_cache.clone(), value_cache.clone()
    with pytest.raises((ValueError, torch._dynamo.exc.TorchRuntimeError),
                       match=r"ValueError.*value should be .*H \(from key\)"):
        compiled(key, value[:, :1], key_cache, value_cache, slots)
    assert torch.equal(key_cache, kc) and torch.equal(value_cache, vc)


# --- Meta and FakeTensor ----------------------------------------------------------------------
def test_meta_tensors():
    args = [t.to("meta") for t in _good()]
    assert OP(*args) is None
    bad = list(args)
    bad[1] = bad[1][:, :1]
    with pytest.raises(ValueError, match=r"value should be"):
        OP(*bad)
    bad = list(args)
    bad[0] = torch.empty(6, 2, 8, dtype=torch.float64, device="meta")
    with pytest.raises(TypeError, match=r"key should have dtype"):
        OP(*bad)


def test_fake_tensor_mode():
    real = _good()
    with FakeTensorMode() as mode:
        fakes = [mode.from_tensor(t) for t in real]
        assert OP(*fakes) is None
        with pytest.raises(ValueError, match=r"slot_mapping should be \[T'\] with T' <= T"):
            OP(*fakes[:4], torch.empty(9, dtype=torch.int64))


def test_fake_tensor_mode_with_symbolic_sizes_adds_no_guard():
    """Symbolic T: the Meta kernel must neither read a size (no guard) nor fail."""
    from torch.fx.experimental.symbolic_shapes import ShapeEnv, StatelessSymbolicContext, DimDynamic

    shape_env = ShapeEnv()
    real = _good()
    with FakeTensorMode(shape_env=shape_env) as mode:
        fakes = []
        for t in real:
            context = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC] * t.dim())
            fakes.append(mode.from_tensor(t, symbolic_context=context))
        assert not isinstance(fakes[0].shape[0], int)
        assert OP(*fakes) is None
    assert not shape_env.guards, [str(g.expr) for g in shape_env.guards]


# --- torchair -----------------------------------------------------------------------------------


@pytest.fixture
def stand_in_torchair(monkeypatch):
    """A stand-in torchair (the real one needs CANN): ascend_ops.devkit.torchair_testing."""
    yield from torchair_testing.stand_in_torchair(monkeypatch, "ascend_ops.reshape_and_cache")


def test_torchair_converter_refuses_forms_the_ge_prototype_lacks(stand_in_torchair):
    """The GE prototype has the ND key + value form only: the other forms are refused, not
    dropped (the mapping itself: tests/test_torch_front_doors.py, for every op)."""
    assert torch_ops.register_torchair_converter() is True
    [(_, fn)] = stand_in_torchair["register"]
    tensors = {name: object() for name in ("key", "value", "key_cache", "value_cache", "slot_mapping")}
    assert fn(**tensors, cache_mode=0, head_num=None, meta_outputs=None) is None
    assert "attrs" not in stand_in_torchair["custom_op"][0] or not stand_in_torchair["custom_op"][0]["attrs"]
    with pytest.raises(NotImplementedError, match="ND key\\+value form only"):
        fn(**{**tensors, "value": None, "value_cache": None}, cache_mode=0, head_num=None, meta_outputs=None)
    with pytest.raises(NotImplementedError, match="cache_mode=1"):
        fn(**tensors, cache_mode=1, head_num=None, meta_outputs=None)


# --- strided and head-major caches under Meta / FakeTensor -------------------------------------
def test_fake_tensor_mode_strided_and_head_major_caches():
    kv = torch.zeros(4, 2, 8, 2, 16, dtype=torch.float16)  # [nb, 2, bs, H, D]
    key = torch.randn(5, 2, 16).half()
    slots = torch.arange(5)
    with FakeTensorMode() as mode:
        fk, fkv, fs = mode.from_tensor(key), mode.from_tensor(kv), mode.from_tensor(slots)
        assert OP(fk, fk.clone(), fkv[:, 0], fkv[:, 1], fs) is None
        hm = fkv.view(4, 2, 2, 8, 16)  # [nb, 2, H, bs, D]
        assert OP(fk, fk.clone(), hm[:, 0], hm[:, 1], fs, cache_mode=2) is None
        with pytest.raises(ValueError, match="contiguous in its last dim"):
            wide = mode.from_tensor(torch.zeros(4, 8, 2, 32, dtype=torch.float16))
            OP(fk, fk.clone(), wide[..., ::2], fkv[:, 1], fs)


def test_meta_strided_caches():
    kv = torch.empty(4, 2, 8, 2, 16, dtype=torch.float16, device="meta")
    key = torch.empty(5, 2, 16, dtype=torch.float16, device="meta")
    assert OP(key, key, kv[:, 0], kv[:, 1], torch.empty(5, dtype=torch.int64, device="meta")) is None


def test_eager_strided_halves_and_refused_overlap():
    kv = torch.randn(4, 2, 8, 2, 16).half()
    key, value = torch.randn(5, 2, 16).half(), torch.randn(5, 2, 16).half()
    slots = torch.tensor([3, 9, -1, 30, 0])
    want = kv.clone()
    for t, s in enumerate(slots.tolist()):
        if s >= 0:
            want[s // 8, 0, s % 8] = key[t]
            want[s // 8, 1, s % 8] = value[t]
    OP(key, value, kv[:, 0], kv[:, 1], slots)
    assert torch.equal(kv, want)
    before = kv.clone()
    with pytest.raises(ValueError, match="should not share memory"):
        OP(key, value, kv[:, 0], kv[:, 0], slots)
    assert torch.equal(kv, before)
