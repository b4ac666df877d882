"""The AscendC kernel's own data checks (the float op's check phase, shared), with the host's
data checks off (host_data_checks=False, as on the NPU where nothing is read on the host): bad
lengths and block ids raise the host's exception, and every output byte is left as it was (the
AIC abandons its first key block before publishing it, the AIVs write nothing). Decode rows with
key splits (several units per row) and prefill rows, both sparse modes."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_ops.common.loader import load_native

from liq_cases import Shape, make

core = load_native("ascend_ops.lightning_indexer_quant", "core")
if not core.HAS_EMU:
    pytest.skip("the emulator build is off (AOP_WITH_EMU): no emu backend to test", allow_module_level=True)

D = 128
SHAPES = [
    Shape((1, 1), (3000, 700), 64, D, 256, block_size=128, name="decode-split"),
    Shape((6, 3), (90, 45), 8, D, 32, block_size=16, name="prefill"),
]


def poke(name, index, value):
    def mutate(args):
        a = args[name].copy()
        a[index] = value
        args[name] = a
        return args
    return mutate


CASES = [  # (id, mutation, exception, words)
    ("block-id-beyond", poke("block_table", (1, 0), 10**6), IndexError, ["block_table", "1000000"]),
    ("block-id-negative", poke("block_table", (0, 1), -3), IndexError, ["block_table", "-3"]),
    ("key-length-beyond", poke("actual_seq_lengths_key", 0, 10**6), ValueError, ["actual_seq_lengths_key"]),
    ("query-length-negative", poke("actual_seq_lengths_query", 1, -1), ValueError, ["actual_seq_lengths_query"]),
]


@pytest.mark.parametrize("mode", (0, 3))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_kernel_check_raises_and_writes_nothing(case, shape, mode):
    name, mutate, exc, words = case
    args = mutate(make(shape, "BSND", "PA_BSND", weights_dtype="float16", scale_dtype="float16", seed=7))
    with pytest.raises(exc) as host:  # the host's own check: the message the kernel's record must give
        core.run_cpu(**args, sparse_mode=mode)
    lead = args["query"].shape[:2]
    out_idx = np.full(lead + (1, shape.k), 12345, dtype=np.int32)
    out_val = np.full(lead + (1, shape.k), 7.5, dtype=np.float32)
    with pytest.raises(exc) as kernel:
        core.run_emu(**args, sparse_mode=mode, return_value=True, sparse_indices=out_idx, sparse_values=out_val,
                     host_data_checks=False, order="both")
    assert str(kernel.value) == str(host.value)
    for w in words:
        assert w in str(kernel.value)
    assert (out_idx == 12345).all() and (out_val == 7.5).all()
