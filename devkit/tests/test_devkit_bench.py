"""The benchmark harness, timed with a fake clock so every number is known."""

from __future__ import annotations

import csv
import json
from typing import List

import numpy as np
import pytest

from ascend_ops.devkit import bench
from ascend_ops.devkit.bench import Case, Result, Runner, plot, print_table, write_csv, write_json


class Clock:
    """A fake perf_counter_ns that only advances when a timed function says so."""

    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now

    def work(self, ns: int):
        def fn() -> None:
            self.now += ns
        return fn

    def varying(self, durations: List[int]):
        it = iter(durations)

        def fn() -> None:
            self.now += next(it)
        return fn


META = {"common_version": "0.1.0", "torch_version": None, "mindspore_version": None,
        "numpy_version": np.__version__, "commit": "abc123"}


def test_measure_constant_time():
    clock = Clock()
    t = Runner(warmup=3, repeats=7, min_time=0, timer=clock).measure(clock.work(2500))
    assert (t.median, t.p20, t.p80, t.spread) == (2.5, 2.5, 2.5, 0.0)
    assert t.samples == 7
    assert t.number == 8     # calls per sample: 8 x 2.5 µs reach min_sample_ns (20 µs)


def test_measure_percentiles():
    clock = Clock()
    durations = [1000] * 3 + [5000] + [1000 * k for k in (1, 9, 2, 8, 3, 7, 4, 6, 5, 10)]
    runner = Runner(warmup=3, repeats=10, min_time=0, min_sample_ns=0, timer=clock)
    t = runner.measure(clock.varying(durations))      # 3 warm-up, 1 calibration, 10 samples
    samples = np.arange(1, 11, dtype=float)
    assert t.number == 1 and t.samples == 10
    assert t.median == pytest.approx(np.percentile(samples, 50))
    assert t.p20 == pytest.approx(np.percentile(samples, 20))
    assert t.p80 == pytest.approx(np.percentile(samples, 80))
    assert t.spread == pytest.approx((t.p80 - t.p20) / t.median)


def test_min_time_adds_samples():
    clock = Clock()
    t = Runner(warmup=0, repeats=3, min_time=1e-3, min_sample_ns=0, timer=clock).measure(
        clock.work(100_000))
    assert t.samples == 10       # 10 x 100 µs reach 1 ms


def test_real_timer_is_sane():
    t = Runner(warmup=2, repeats=5, min_time=0.01).measure(lambda: sum(range(100)))
    assert 0 < t.p20 <= t.median <= t.p80 and t.number > 1


def test_runner_validates():
    with pytest.raises(ValueError, match="repeats"):
        Runner(repeats=0)


def _results(clock: Clock) -> List[Result]:
    runner = Runner(warmup=1, repeats=5, min_time=0, timer=clock)
    cases = [
        Case("fake_op", "numpy", "T=16", "float16", clock.work(4000), bytes_moved=4_000_000),
        Case("fake_op", "cpu", "T=16", "float16", clock.work(1000), bytes_moved=4_000_000),
        Case("fake_op", "emu", "T=16", "float16", clock.work(8000)),
        Case("fake_op", "numpy", "T=4096", "float16", clock.work(40_000)),
        Case("fake_op", "cpu", "T=4096", "float16", clock.work(5000)),
        Case("fake_op", "cpu", "T=99", "float16", clock.work(5000)),      # no baseline row
    ]
    return runner.run(cases, baseline="numpy")


def test_speedup_and_bandwidth_from_a_known_clock():
    rows = {(r.provider, r.shape): r for r in _results(Clock())}
    assert rows[("numpy", "T=16")].speedup == 1.0
    assert rows[("cpu", "T=16")].speedup == 4.0
    assert rows[("emu", "T=16")].speedup == 0.5
    assert rows[("cpu", "T=4096")].speedup == 8.0
    assert rows[("cpu", "T=99")].speedup is None
    assert rows[("cpu", "T=16")].gbps == pytest.approx(4000.0)   # 4 MB in 1 µs
    assert rows[("emu", "T=16")].gbps is None
    assert all(r.baseline == "numpy" for r in rows.values())


def test_print_table(capsys):
    print_table(_results(Clock()))
    out = capsys.readouterr().out
    assert "p50 µs" in out and "speedup" in out and "p50 of numpy / p50" in out
    cpu = next(line for line in out.splitlines() if " cpu " in line and "T=4096" in line)
    assert cpu.split()[-1] == "8"


def test_write_csv_and_json(tmp_path):
    results = _results(Clock())
    path = write_csv(results, tmp_path / "out" / "fake.csv", meta=META)
    with path.open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(results)
    cpu = next(r for r in rows if r["provider"] == "cpu" and r["shape"] == "T=16")
    assert float(cpu["p50_us"]) == 1.0 and float(cpu["speedup"]) == 4.0
    assert cpu["commit"] == "abc123" and cpu["numpy_version"] == np.__version__
    assert {"op", "provider", "shape", "dtype", "p20_us", "p80_us", "gbps"} <= set(cpu)

    data = json.loads(write_json(results, tmp_path / "fake.json", meta=META).read_text())
    assert data["meta"] == META and len(data["results"]) == len(results)
    assert data["results"][1]["speedup"] == 4.0


def test_environment_records_versions(tmp_path):
    env = bench.environment(repo=tmp_path)      # not a git checkout
    assert env["numpy_version"] == np.__version__ and env["commit"] is None
    assert {"common_version", "torch_version", "mindspore_version", "python"} <= set(env)


@pytest.mark.parametrize("metric", ["speedup", "p50_us"])
def test_plot_writes_a_png(tmp_path, metric):
    path = plot(_results(Clock()), tmp_path / "plots" / f"fake-{metric}.png", metric=metric,
                logy=metric == "p50_us")
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_plot_rejects():
    clock = Clock()
    plain = Runner(warmup=0, repeats=3, min_time=0, timer=clock).run(
        [Case("op", "cpu", "s", "float16", clock.work(10))])
    with pytest.raises(ValueError, match="no speedups"):
        plot(plain, "unused.png")
    with pytest.raises(ValueError, match="metric"):
        plot(plain, "unused.png", metric="gbps")
    with pytest.raises(ValueError, match="no results"):
        plot([], "unused.png")


def test_device_arrays_start_on_512_byte_boundaries_with_the_same_values():
    from ascend_ops.devkit.device_arrays import DEVICE_ALIGN, device, device_case

    rng = np.random.default_rng(0)
    for shape, dtype in (((3, 5), np.float32), ((7,), np.int8), ((2, 3, 4), np.float16)):
        a = rng.standard_normal(shape).astype(dtype)
        d = device(a)
        assert d.ctypes.data % DEVICE_ALIGN == 0 and d.shape == a.shape and d.dtype == a.dtype
        np.testing.assert_array_equal(d, a)
    case = device_case({"x": np.arange(5, dtype=np.int32), "layout": "BSND"})
    assert case["layout"] == "BSND" and case["x"].ctypes.data % DEVICE_ALIGN == 0


def test_cpu_time_ms_counts_process_time_not_wall_time():
    import time

    def busy() -> None:  # about 2 ms of this process's CPU time
        end = time.process_time() + 0.002
        while time.process_time() < end:
            pass

    assert bench.cpu_time_ms(lambda: time.sleep(0.005), seconds=0.05) < 1.0
    assert bench.cpu_time_ms(busy, seconds=0.05) >= 1.9


def test_load_average_is_the_one_minute_figure():
    import os

    assert abs(float(bench.load_average()) - os.getloadavg()[0]) < 1.0
