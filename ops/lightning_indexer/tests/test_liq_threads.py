"""The CPU kernel's result does not depend on the thread count (work split, merge): byte-equal
outputs with 1, 2 and 3 workers on shapes that split keys into several chunks."""
import numpy as np
import pytest

from ascend_ops.lightning_indexer_quant import _core, lightning_indexer_quant

from liq_cases import Shape, assert_topk, make, reference_rows

SHAPES = [Shape((1, 1), (5000, 3000), 16, 64, 300, block_size=32, name="decode-split"),
          Shape((12, 30), (900, 2000), 8, 32, 64, block_size=16, name="prefill")]


@pytest.fixture
def restore_threads():
    before = _core.num_threads()
    yield
    _core.set_num_threads(before)


@pytest.mark.parametrize("layouts", [("BSND", "PA_BSND"), ("TND", "TND")], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_thread_count_does_not_change_the_result(shape, layouts, restore_threads):
    args = make(shape, *layouts, seed=1, key_pool=None)
    results = []
    for threads in (1, 2, 3):
        _core.set_num_threads(threads)
        results.append(lightning_indexer_quant(**args, sparse_mode=3, return_value=True))
    for idx, val in results[1:]:
        np.testing.assert_array_equal(idx, results[0][0])
        np.testing.assert_array_equal(val, results[0][1])
    assert_topk(*results[0], reference_rows(args, 3), shape.k)
