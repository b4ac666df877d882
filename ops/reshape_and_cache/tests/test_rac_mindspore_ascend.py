"""reshape_and_cache's key-only form on Ascend: ms.reshape_and_cache passes the placeholder ABSENT
for value and value_cache, their present bits off, to the generated graph primitive. What every
op's MindSpore front door does on Ascend: tests/test_ms_ascend_front_doors.py. No NPU here:
device_target and the build info are faked (the generated primitive is a recorder).
"""
from __future__ import annotations

import numpy as np
import pytest

ms = pytest.importorskip("mindspore", reason="mindspore is not installed")  # before the adapter
from mindspore import Parameter, Tensor  # noqa: E402

import ascend_ops.reshape_and_cache._build_info as info  # noqa: E402
from ascend_ops.devkit import ms_ascend_testing as fake  # noqa: E402
from ascend_ops.devkit.ms_ascend_testing import on_ascend  # noqa: E402,F401  (a fixture)
from ascend_ops.reshape_and_cache import ms as rac_ms  # noqa: E402


def test_key_only_calls_the_generated_primitive_with_placeholders(on_ascend, monkeypatch):
    calls = fake.fake_generated_primitive(monkeypatch, info, "reshape_and_cache", "out")
    key = Tensor(np.ones((2, 1, 16), np.float16))
    key_cache = Parameter(Tensor(np.zeros((2, 4, 1, 16), np.float16)), name="kc")
    slots = Tensor(np.array([0, 5], np.int32))
    assert rac_ms.reshape_and_cache(key, None, key_cache, None, slots, 1, 1) == "out"
    # cache_mode 1, head_num 1, kv_cache_dtype "auto" (code 0), no scales; present: key, key_cache,
    # slot_mapping are required, head_num (bit 6) given
    absent = rac_ms.ABSENT
    assert calls == [(key, absent, key_cache, absent, slots, 1, 1, 0, absent, absent, absent, absent, 0b1000000)]
