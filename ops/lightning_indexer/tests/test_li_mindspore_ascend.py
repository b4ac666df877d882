"""lightning_indexer's MindSpore front door on Ascend: ms.lightning_indexer picks the generated
graph primitive (its op yaml generated from the description) from the build info, or raises a
RuntimeError naming the op and why. No NPU here: device_target and the build info are faked
(the generated primitive is a recorder); the kernel itself is only compile-checked
(tests/test_ms_ascend_compile.py), not run on NPU.
"""
from __future__ import annotations

import numpy as np
import pytest

ms = pytest.importorskip("mindspore", reason="mindspore is not installed")  # before the adapter
from mindspore import Tensor, nn  # noqa: E402

import ascend_ops.lightning_indexer._build_info as info  # noqa: E402
from ascend_ops.common import ms_ascend_testing as fake  # noqa: E402
from ascend_ops.common.ms_ascend_testing import on_ascend  # noqa: E402,F401  (a fixture)
from ascend_ops.lightning_indexer import ms as op_ms  # noqa: E402


def inputs():
    # query [B, S1, N1, D], key PA_BSND [blocks, block_size, N2, D], weights [B, S1, N1]; no optional tensors.
    return (Tensor(np.ones((1, 2, 4, 128), np.float16)), Tensor(np.ones((2, 16, 1, 128), np.float16)),
            Tensor(np.ones((1, 2, 4), np.float16)))


def test_not_built_raises_naming_the_op_and_why(on_ascend, monkeypatch):
    fake.fake_not_built(monkeypatch, info)
    with pytest.raises(RuntimeError, match=r"^lightning_indexer: MindSpore's device_target is 'Ascend'.*"
                                           r"ascend-op-lightning-indexer.*CANN was not found"):
        op_ms.lightning_indexer(*inputs(), layout_key="BSND", sparse_count=8)


def test_not_built_raises_when_a_graph_is_compiled(on_ascend, monkeypatch):
    fake.fake_not_built(monkeypatch, info)
    ms.set_context(mode=ms.GRAPH_MODE)

    class Cell(nn.Cell):
        def construct(self, query, key, weights):
            return op_ms.lightning_indexer(query, key, weights, layout_key="BSND", sparse_count=8)

    with pytest.raises(RuntimeError, match="lightning_indexer: MindSpore's device_target is 'Ascend'"):
        Cell()(*inputs())


def test_built_calls_the_generated_primitive_with_the_yaml_inputs(on_ascend, monkeypatch):
    calls = fake.fake_generated_primitive(monkeypatch, info, "lightning_indexer", ("indices", "values"))
    args = inputs()
    assert op_ms.lightning_indexer(*args, layout_key="BSND", sparse_count=8, return_value=True) == ("indices", "values")
    names = fake.yaml_arg_names(__file__, "lightning_indexer")
    assert len(calls) == 1 and len(calls[0]) == len(names)
    assert calls[0][:3] == args and calls[0][3:6] == (op_ms.ABSENT,) * 3
    # layout codes (the index in the description's choices), sparse_count, sparse_mode, return_value, present
    assert calls[0][6:] == (0, 0, 8, 3, True, 0)


def test_the_eager_function_the_generated_primitive_imports_exists():
    assert callable(op_ms.lightning_indexer_npu)  # gen_custom_ops.py -m ascend_ops.lightning_indexer.ms
