"""The emulator from Python: the example add kernel on NumPy arrays, in order and shuffled,
with its counters, and EmulatorError for a broken launch. The module is built by the CMake
test tree; ctest passes its directory in AOP_EMU_EXAMPLE_DIR."""
import os
import sys

import numpy as np
import pytest

_DIR = os.environ.get("AOP_EMU_EXAMPLE_DIR")
if not _DIR:
    pytest.skip("AOP_EMU_EXAMPLE_DIR is not set: run through ctest (the module is built by CMake)",
                allow_module_level=True)
sys.path.insert(0, _DIR)
import _emu_example as emu  # noqa: E402

SIZES = [1, 13, 4096, 48 * 2048, 48 * 2048 * 3 + 13]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("order", ["in_order", "shuffled", "both"])
def test_add_matches_numpy(n, order):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    z, report = emu.run_add(x, y, order=order, seed=5)
    np.testing.assert_array_equal(z, x + y)
    assert len(report["orders"]) == (2 if order == "both" else 1)
    totals = report["totals"]
    assert totals["gm_read_bytes"] == 2 * n * 4
    assert totals["gm_write_bytes"] == n * 4
    assert totals["local_to_gm"]["bytes"] == n * 4
    assert totals["gm_to_local"]["transfers"] == 2 * totals["local_to_gm"]["transfers"]
    assert report["max_ub_high_water"] <= report["ub_bytes"]
    assert len(report["blocks"]) == report["block_dim"]
    # the timing model's keys (a model, not a measurement)
    assert report["kernel_type"] == "KERNEL_TYPE_AIV_ONLY"
    assert report["modelled_us"] >= report["gm_bound_us"] > 0
    assert report["bound"] in ("gm", "vector", "cube", "scalar", "latency")
    assert set(report["pipe_busy_us"]) >= {"MTE2", "MTE3", "V"}
    assert all(report["pipe_busy_max_us"][p] <= report["pipe_busy_us"][p] + 1e-9 for p in report["pipe_busy_us"])
    assert all(b["core"] == "AIV" and b["modelled_us"] > 0 for b in report["blocks"])


def test_ub_too_small_raises_emulator_error():
    x = np.ones(48 * 4096, dtype=np.float32)
    with pytest.raises(emu.EmulatorError) as info:
        emu.run_add(x, x, tile=8200)  # 6 buffers of 8200 floats do not fit 192 KiB
    err = info.value
    assert isinstance(err, RuntimeError)
    assert err.check == "ub-overflow"
    assert err.kernel == "add_custom_float"
    assert err.block == 0
    assert err.file == "add_kernel.h"


def test_bad_order_is_a_value_error():
    x = np.ones(8, dtype=np.float32)
    with pytest.raises(ValueError, match="order should be"):
        emu.run_add(x, x, order="sideways")
