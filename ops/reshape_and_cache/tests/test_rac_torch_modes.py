"""The PyTorch adapter with the optional schema arguments: ``Tensor? value``,
``Tensor(b!)? value_cache``, ``int cache_mode=0``, ``int? head_num=None``. Exact against the
reference in eager mode and under torch.compile(fullgraph=True), opcheck on each form, errors
that leave the caches untouched, and every five-tensor call unchanged.
"""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("torch is not installed: the PyTorch adapter cannot be tested", allow_module_level=True)

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
from ascend_ops.reshape_and_cache import reference, torch_ops  # noqa: E402
import torch  # noqa: E402

from rac_cases import Shape, make  # noqa: E402

OP = torch.ops.ascend_ops.reshape_and_cache
SHAPE = Shape(19, 13, 2, 32, 64, 5, 16, key_pad=32, padding=3)


def arrays(form, dtype="float16"):
    key, value, key_cache, value_cache, slots = make(SHAPE, dtype, np.int64, seed=7)
    attrs = {}
    if "nz" in form:
        key_cache, value_cache = reference.nd_to_nz(key_cache), reference.nd_to_nz(value_cache)
        attrs["cache_mode"] = 1
    if "key_only" in form:
        value = value_cache = None
    want = reference.reshape_and_cache(key, value, key_cache, value_cache, slots, **attrs)
    if "head_num" in form:
        key = key.reshape(key.shape[0], -1)
        value = None if value is None else value.reshape(value.shape[0], -1)
        attrs["head_num"] = SHAPE.heads
    return (key, value, key_cache, value_cache, slots), attrs, want


def tensors(args):
    return [None if a is None else torch.from_numpy(np.array(a, copy=True) if a.ndim == 4 else a) for a in args]


FORMS = ["nd", "key_only", "nz", "nz+key_only", "head_num", "nz+head_num", "key_only+head_num"]


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("form", FORMS)
def test_forms_match_reference(form, compiled):
    args, attrs, want = arrays(form)
    t = tensors(args)
    fn = torch.compile(torch_ops.reshape_and_cache, fullgraph=True, dynamic=True) if compiled \
        else torch_ops.reshape_and_cache
    fn(*t, **attrs)
    assert np.array_equal(t[2].numpy(), want[0])
    if want[1] is not None:
        assert np.array_equal(t[3].numpy(), want[1])


@pytest.mark.parametrize("form", ["key_only", "nz", "nz+key_only", "head_num"])
def test_opcheck(form):
    args, attrs, _ = arrays(form)
    torch.library.opcheck(OP.default, tuple(tensors(args)), attrs)


def test_five_tensor_calls_unchanged():
    args, _, want = arrays("nd")
    t = tensors(args)
    OP(*t)  # positional, as before the schema change
    assert np.array_equal(t[2].numpy(), want[0]) and np.array_equal(t[3].numpy(), want[1])
    t = tensors(args)
    OP(key=t[0], value=t[1], key_cache=t[2], value_cache=t[3], slot_mapping=t[4])
    assert np.array_equal(t[2].numpy(), want[0]) and np.array_equal(t[3].numpy(), want[1])
    assert "Tensor? value" in str(OP.default._schema) and "Tensor(b!)? value_cache" in str(OP.default._schema)


def test_key_only_bumps_key_cache_version_only():
    args, attrs, _ = arrays("key_only")
    t = tensors(args)
    before = t[2]._version
    OP(*t)
    assert t[2]._version == before + 1


@pytest.mark.parametrize("case,exc,words", [
    (lambda t: (t[0], t[1], t[2], None, t[4]), ValueError, ["value_cache", "None"]),
    (lambda t: (t[0], None, t[2], t[3], t[4]), ValueError, ["value", "None"]),
], ids=["value-without-value_cache", "value_cache-without-value"])
def test_half_key_only_is_refused_untouched(case, exc, words):
    args, _, _ = arrays("nd")
    t = tensors(args)
    before = [t[2].clone(), t[3].clone()]
    with pytest.raises(exc) as info:
        OP(*case(t))
    for w in words:
        assert w in str(info.value)
    assert torch.equal(t[2], before[0]) and torch.equal(t[3], before[1])


def test_nz_head_size_not_fractal_is_refused():
    key = torch.zeros(3, 2, 8, dtype=torch.float16)
    cache = torch.zeros(2, 1, 4, 16, dtype=torch.float16)
    with pytest.raises(ValueError, match="multiple of the fractal width 16"):
        OP(key, None, cache, None, torch.zeros(3, dtype=torch.int64), cache_mode=1)
    assert not cache.any()


def test_meta_kernel_checks_the_new_arguments():
    key = torch.empty(3, 32, device="meta", dtype=torch.float16)
    cache = torch.empty(2, 4, 2, 16, device="meta", dtype=torch.float16)
    slots = torch.empty(3, device="meta", dtype=torch.int64)
    OP(key, None, cache, None, slots, head_num=2)  # valid: no error
    with pytest.raises(ValueError, match="head_num = 3 should divide"):
        OP(key, None, cache, None, slots, head_num=3)
