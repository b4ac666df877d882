"""The dtype names of ascend_ops.common.dtypes against torch and MindSpore (against the C library:
test_common_clib.py)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from ascend_ops.common import dtypes

HAS_TORCH = importlib.util.find_spec("torch") is not None
HAS_MINDSPORE = importlib.util.find_spec("mindspore") is not None


# --- dtype names ---------------------------------------------------------------------------
class _FakeTorchDtype:
    __module__ = "torch"

    def __repr__(self):
        return "torch.bfloat16"


def test_canonical_names():
    assert dtypes.canonical("float16") == "float16"
    assert dtypes.canonical(np.float32) == "float32"
    assert dtypes.canonical(np.dtype("int8")) == "int8"
    assert dtypes.canonical("torch.bfloat16") == "bfloat16"
    assert dtypes.canonical("BFloat16") == "bfloat16"          # str(mindspore.bfloat16)
    assert dtypes.canonical("mindspore.bool_") == "bool"
    assert dtypes.canonical(_FakeTorchDtype()) == "bfloat16"
    assert dtypes.numpy_dtype("bfloat16") == np.uint16
    with pytest.raises(TypeError, match="unknown dtype"):
        dtypes.canonical(np.uint16)                            # ambiguous: bits or numbers?


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
def test_dtype_table_matches_torch():
    import torch

    for name in dtypes.dtype_names:
        t = dtypes.torch_dtype(name)
        assert isinstance(t, torch.dtype) and dtypes.canonical(t) == name
        assert t.itemsize == dtypes.dtype_names[name].itemsize


@pytest.mark.skipif(not HAS_MINDSPORE, reason="mindspore is not installed")
def test_dtype_table_matches_mindspore():
    for name in dtypes.dtype_names:
        m = dtypes.mindspore_dtype(name)
        assert dtypes.canonical(m) == name and dtypes.canonical(str(m)) == name
