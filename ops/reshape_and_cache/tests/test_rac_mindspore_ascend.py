"""reshape_and_cache's MindSpore front door on Ascend: ms.reshape_and_cache picks the generated
graph primitive (its op yaml generated from the description) from the build info, or raises a
RuntimeError naming the op and why. No NPU here: device_target and the build info are faked
(the generated primitive is a recorder); the kernel itself is only compile-checked
(tests/test_ms_ascend_compile.py), not run on NPU.
"""
from __future__ import annotations

import numpy as np
import pytest

ms = pytest.importorskip("mindspore", reason="mindspore is not installed")  # before the adapter
from mindspore import Parameter, Tensor, nn  # noqa: E402

import ascend_ops.reshape_and_cache._build_info as info  # noqa: E402
from ascend_ops.common import ms_ascend_testing as fake  # noqa: E402
from ascend_ops.common.ms_ascend_testing import on_ascend  # noqa: E402,F401  (a fixture)
from ascend_ops.reshape_and_cache import ms as rac_ms  # noqa: E402


def inputs():
    key = Tensor(np.ones((2, 1, 16), np.float16))
    caches = [Parameter(Tensor(np.zeros((2, 4, 1, 16), np.float16)), name=n) for n in ("kc", "vc")]
    return key, key, caches[0], caches[1], Tensor(np.array([0, 5], np.int32))


def test_not_built_raises_naming_the_op_and_why(on_ascend, monkeypatch):
    fake.fake_not_built(monkeypatch, info)
    with pytest.raises(RuntimeError, match=r"^reshape_and_cache: MindSpore's device_target is 'Ascend'.*"
                                           r"ascend-op-reshape-and-cache.*CANN was not found"):
        rac_ms.reshape_and_cache(*inputs())


def test_not_built_raises_when_a_graph_is_compiled(on_ascend, monkeypatch):
    fake.fake_not_built(monkeypatch, info)
    ms.set_context(mode=ms.GRAPH_MODE)

    class Cell(nn.Cell):
        def construct(self, key, value, key_cache, value_cache, slots):
            return rac_ms.reshape_and_cache(key, value, key_cache, value_cache, slots)

    with pytest.raises(RuntimeError, match="reshape_and_cache: MindSpore's device_target is 'Ascend'"):
        Cell()(*inputs())


def test_built_calls_the_generated_primitive_with_the_yaml_inputs(on_ascend, monkeypatch):
    calls = fake.fake_generated_primitive(monkeypatch, info, "reshape_and_cache", "out")
    args = inputs()
    assert rac_ms.reshape_and_cache(*args, cache_mode=0, head_num=None) == "out"
    names = fake.yaml_arg_names(__file__, "reshape_and_cache")
    assert len(calls) == 1 and len(calls[0]) == len(names)
    # cache_mode, head_num (None -> 0), present: value (bit 1) and value_cache (bit 3) given
    assert calls[0][:5] == args and calls[0][5:] == (0, 0, 0b1010)


def test_key_only_calls_the_generated_primitive_with_placeholders(on_ascend, monkeypatch):
    calls = fake.fake_generated_primitive(monkeypatch, info, "reshape_and_cache", "out")
    key, _, key_cache, _, slots = inputs()
    assert rac_ms.reshape_and_cache(key, None, key_cache, None, slots, 1, 1) == "out"
    assert calls[0] == (key, rac_ms.ABSENT, key_cache, rac_ms.ABSENT, slots, 1, 1, 0b1000000)  # head_num given


def test_the_eager_function_the_generated_primitive_imports_exists():
    assert callable(rac_ms.reshape_and_cache_npu)  # gen_custom_ops.py -m ascend_ops.reshape_and_cache.ms
