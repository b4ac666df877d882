"""The one benchmark harness every op's ``bench/`` uses.

Usage::

    from ascend_ops.devkit.bench import Case, Runner, plot, print_table, write_csv

    cases = [Case("my_op", provider, "T=4096 H=8 D=128", "float16", fn, bytes_moved=n)
             for provider, fn in providers.items()]
    results = Runner().run(cases, baseline="numpy")
    print_table(results)
    write_csv(results, "bench-results/my_op.csv")
    plot(results, "bench-results/my_op.png")

Times are per call, in microseconds, from ``time.perf_counter_ns``; each sample times a
loop of calls long enough for the timer's resolution. Results form a long table: one row
per (op, provider, shape, dtype) with p20/p50/p80, GB/s when the bytes moved are given and
the speedup against a baseline provider of the same run (``baseline p50 / p50``: above 1 is
faster than the baseline).
"""

from __future__ import annotations

import csv
import datetime
import json
import math
import os
import platform as _platform
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, TextIO, Union

import numpy as np

from ascend_ops.common._meta import dist_version
from ascend_ops.common.table import format_table

__all__ = [
    "Timing",
    "Case",
    "Result",
    "Runner",
    "with_speedup",
    "environment",
    "print_table",
    "write_csv",
    "write_json",
    "plot",
    "MODELLED_HEADERS",
    "modelled_row",
    "print_mindspore_call_cost",
    "cpu_time_ms",
    "load_average",
]

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Timing:
    """Per-call time of one measured function, in microseconds.

    Attributes
    ----------
    median, p20, p80 : float
        Percentiles of the samples (µs per call).
    spread : float
        ``(p80 - p20) / median``: 0.05 means the middle 60 % of samples lie within 5 %.
    samples : int
        Number of samples.
    number : int
        Calls timed together in each sample.
    """

    median: float
    p20: float
    p80: float
    spread: float
    samples: int = 0
    number: int = 1


@dataclass(frozen=True)
class Case:
    """One thing to time.

    Attributes
    ----------
    op : str
        The op, e.g. ``"my_op"``.
    provider : str
        The implementation, e.g. ``"cpu"``, ``"emu"``, ``"torch eager"``, ``"numpy"``.
    shape : str
        A short shape label, e.g. ``"T=4096 H=8 D=128"``.
    dtype : str
    fn : callable
        Runs the case once (inputs prepared outside).
    bytes_moved : int, optional
        Bytes read plus written per call; gives GB/s.
    """

    op: str
    provider: str
    shape: str
    dtype: str
    fn: Callable[[], object] = field(compare=False, repr=False)
    bytes_moved: Optional[int] = None


@dataclass(frozen=True)
class Result:
    """One row of the long result table (times in µs per call)."""

    op: str
    provider: str
    shape: str
    dtype: str
    p20_us: float
    p50_us: float
    p80_us: float
    spread: float
    samples: int
    number: int
    bytes_moved: Optional[int] = None
    gbps: Optional[float] = None
    baseline: Optional[str] = None
    speedup: Optional[float] = None

    @property
    def key(self) -> tuple:
        """``(op, shape, dtype)``: rows with the same key are compared with each other."""
        return (self.op, self.shape, self.dtype)


class Runner:
    """Times functions: warm-up, calibration, then samples.

    Parameters
    ----------
    warmup : int
        Untimed calls first (caches, allocations, lazy loading).
    repeats : int
        Minimum number of samples.
    min_time : float
        Keep sampling until this many seconds were measured (up to ``max_repeats``).
    max_repeats : int
        Upper bound on samples.
    min_sample_ns : int
        Calls per sample are doubled until a sample lasts this long (timer resolution).
    timer : callable
        Returns integer nanoseconds; ``time.perf_counter_ns``.
    sync : callable, optional
        Called before each timer read (e.g. a device synchronize).
    """

    def __init__(
        self,
        warmup: int = 5,
        repeats: int = 25,
        min_time: float = 0.2,
        *,
        max_repeats: int = 2000,
        min_sample_ns: int = 20_000,
        timer: Callable[[], int] = time.perf_counter_ns,
        sync: Optional[Callable[[], object]] = None,
    ) -> None:
        if warmup < 0 or repeats < 1 or min_time < 0 or max_repeats < repeats:
            raise ValueError(
                f"Runner: need warmup >= 0, 1 <= repeats <= max_repeats, min_time >= 0; got "
                f"warmup={warmup}, repeats={repeats}, max_repeats={max_repeats}, min_time={min_time}"
            )
        self.warmup = warmup
        self.repeats = repeats
        self.min_time = min_time
        self.max_repeats = max_repeats
        self.min_sample_ns = min_sample_ns
        self.timer = timer
        self.sync = sync or (lambda: None)

    def _sample(self, fn: Callable[[], object], number: int) -> int:
        self.sync()
        start = self.timer()
        for _ in range(number):
            fn()
        self.sync()
        return self.timer() - start

    def measure(self, fn: Callable[[], object]) -> Timing:
        """Time ``fn``; returns per-call percentiles in µs."""
        for _ in range(self.warmup):
            fn()
        number = 1
        while number < (1 << 24):
            elapsed = self._sample(fn, number)
            if elapsed >= self.min_sample_ns:
                break
            number *= 2 if elapsed <= 0 else max(2, min(100, math.ceil(self.min_sample_ns / elapsed)))
        samples: List[float] = []
        measured = 0
        min_ns = self.min_time * 1e9
        while len(samples) < self.repeats or (measured < min_ns and len(samples) < self.max_repeats):
            elapsed = self._sample(fn, number)
            measured += elapsed
            samples.append(elapsed / number / 1000.0)
        p20, p50, p80 = (float(p) for p in np.percentile(samples, (20, 50, 80)))
        spread = (p80 - p20) / p50 if p50 > 0 else 0.0
        return Timing(median=p50, p20=p20, p80=p80, spread=spread, samples=len(samples), number=number)

    def run(self, cases: Iterable[Case], baseline: Optional[str] = None) -> List[Result]:
        """Time every case; with ``baseline``, add the speedup against that provider."""
        results = []
        for case in cases:
            t = self.measure(case.fn)
            gbps = case.bytes_moved / (t.median * 1e3) if case.bytes_moved and t.median > 0 else None
            results.append(Result(
                op=case.op, provider=case.provider, shape=case.shape, dtype=case.dtype,
                p20_us=t.p20, p50_us=t.median, p80_us=t.p80, spread=t.spread,
                samples=t.samples, number=t.number, bytes_moved=case.bytes_moved, gbps=gbps,
            ))
        return with_speedup(results, baseline) if baseline else results


def with_speedup(results: Sequence[Result], baseline: str) -> List[Result]:
    """Return the results with ``speedup = baseline p50 / p50`` against ``baseline``.

    Rows are compared within the same (op, shape, dtype); a row without a baseline row of
    its key gets ``speedup=None``.
    """
    base = {r.key: r.p50_us for r in results if r.provider == baseline}
    out = []
    for r in results:
        b = base.get(r.key)
        speedup = b / r.p50_us if b is not None and r.p50_us > 0 else None
        out.append(replace(r, baseline=baseline, speedup=speedup))
    return out


def _git_commit(repo: Optional[PathLike]) -> Optional[str]:
    cwd = str(repo) if repo is not None else None
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True,
                                text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd,
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{commit}-dirty" if dirty else commit or None


def environment(repo: Optional[PathLike] = None) -> Dict[str, Any]:
    """Versions and provenance stored beside results (no framework is imported).

    Returns
    -------
    dict
        common, torch, mindspore, numpy versions (None when absent), the git commit of
        ``repo`` (or the working directory; ``-dirty`` when tracked files changed; None
        outside git), python, machine, cpu count and the UTC time.
    """
    return {
        "common_version": dist_version("ascend-op-common"),
        "torch_version": dist_version("torch"),
        "mindspore_version": dist_version("mindspore"),
        "numpy_version": dist_version("numpy"),
        "commit": _git_commit(repo),
        "python": _platform.python_version(),
        "machine": _platform.machine(),
        "cpus": os.cpu_count(),
        "time_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def print_table(results: Sequence[Result], file: Optional[TextIO] = None) -> None:
    """Print the results as a text table (µs per call, GB/s, speedup)."""
    headers = ["op", "provider", "shape", "dtype", "p20 µs", "p50 µs", "p80 µs", "spread",
               "GB/s", "speedup"]
    rows = [[r.op, r.provider, r.shape, r.dtype, r.p20_us, r.p50_us, r.p80_us, r.spread,
             r.gbps, r.speedup] for r in results]
    baselines = sorted({r.baseline for r in results if r.baseline})
    out = file or sys.stdout
    print(format_table(headers, rows), file=out)
    if baselines:
        print(f"speedup = p50 of {', '.join(baselines)} / p50 (above 1 is faster)", file=out)


def _meta(meta: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    return dict(environment() if meta is None else meta)


def write_csv(results: Sequence[Result], path: PathLike, meta: Optional[Dict[str, Any]] = None) -> Path:
    """Write the long table as CSV: one row per result, the environment in every row.

    Parameters
    ----------
    results : sequence of Result
    path : path-like
        Parent directories are created.
    meta : dict, optional
        Provenance columns; :func:`environment` when omitted.

    Returns
    -------
    pathlib.Path
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    info = _meta(meta)
    names = [f.name for f in fields(Result)] + list(info)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=names)
        writer.writeheader()
        for r in results:
            writer.writerow({**asdict(r), **info})
    return path


def write_json(results: Sequence[Result], path: PathLike, meta: Optional[Dict[str, Any]] = None) -> Path:
    """Write ``{"meta": environment, "results": [rows]}`` as JSON (see :func:`write_csv`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"meta": _meta(meta), "results": [asdict(r) for r in results]}
    path.write_text(json.dumps(payload, indent=2) + "\n")
    return path


def plot(results: Sequence[Result], png_path: PathLike, metric: str = "speedup", *,
         logy: bool = False) -> Path:
    """Draw grouped bars per shape, one bar per provider, one panel per (op, dtype).

    Parameters
    ----------
    results : sequence of Result
    png_path : path-like
    metric : {"speedup", "p50_us"}
        Speedup against the baseline (a line marks 1), or time with p20-p80 error bars.
    logy : bool
        Logarithmic y axis (times or speedups spanning orders of magnitude).

    Returns
    -------
    pathlib.Path
    """
    if metric not in ("speedup", "p50_us"):
        raise ValueError(f"plot: metric should be 'speedup' or 'p50_us', got {metric!r}")
    if not results:
        raise ValueError("plot: no results")
    if metric == "speedup" and all(r.speedup is None for r in results):
        raise ValueError("plot: no speedups; run with a baseline or plot metric='p50_us'")
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # Agg only: no display needed
    from matplotlib.figure import Figure

    panels: List[tuple] = []
    for r in results:
        if (r.op, r.dtype) not in panels:
            panels.append((r.op, r.dtype))
    fig = Figure(figsize=(10, 3.6 * len(panels)), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
    for ax, (op, dtype) in zip(axes, panels):
        rows = [r for r in results if (r.op, r.dtype) == (op, dtype)]
        shapes = list(dict.fromkeys(r.shape for r in rows))
        providers = list(dict.fromkeys(r.provider for r in rows))
        width = 0.8 / len(providers)
        for i, provider in enumerate(providers):
            xs, heights, errs = [], [], [[], []]
            for j, shape in enumerate(shapes):
                match = [r for r in rows if r.provider == provider and r.shape == shape]
                if not match or getattr(match[0], metric) is None:
                    continue
                r = match[0]
                xs.append(j - 0.4 + width * (i + 0.5))
                heights.append(getattr(r, metric))
                errs[0].append(r.p50_us - r.p20_us)
                errs[1].append(r.p80_us - r.p50_us)
            ax.bar(xs, heights, width, label=provider,
                   yerr=errs if metric == "p50_us" else None, capsize=2)
        ax.set_xticks(range(len(shapes)))
        ax.set_xticklabels(shapes, rotation=20, ha="right")
        if metric == "speedup":
            baseline = next((r.baseline for r in rows if r.baseline), "baseline")
            ax.axhline(1.0, color="black", linewidth=0.8)
            ax.set_ylabel(f"speedup vs {baseline} (x)")
        else:
            ax.set_ylabel("p50 per call (µs)")
        if logy:
            ax.set_yscale("log")
        ax.set_title(f"{op} ({dtype})")
        ax.legend(fontsize="small")
    png_path = Path(png_path)
    png_path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png_path, dpi=100)
    return png_path


#: Columns of :func:`modelled_row`.
MODELLED_HEADERS = ["shape", "soc", "blocks", "GM bytes", "minimum bytes", "modelled µs", "bound",
                    "min-traffic µs", "modelled / min-traffic"]


def modelled_row(shape: str, soc: str, report: Dict[str, Any], minimum_bytes: int) -> list:
    """One row of the emulator's timing model for an AscendC launch (``backend="emu"`` report).

    ``min-traffic µs`` is the time to move only the bytes the op must move (``minimum_bytes``)
    at the model's HBM bandwidth (the report's ``hbm_bound_us`` is the same for the bytes the
    kernel moved to and from HBM, after the modelled L2). A model of a 910B, not a measurement:
    nothing here ran on an NPU.
    """
    moved = report["totals"]["gm_read_bytes"] + report["totals"]["gm_write_bytes"]
    hbm = report["hbm_bytes"]
    floor = report["hbm_bound_us"] * minimum_bytes / hbm if hbm else 0.0
    ratio = report["modelled_us"] / floor if floor > 0 else float("nan")
    return [shape, soc, report["block_dim"], moved, minimum_bytes, report["modelled_us"], report["bound"],
            floor, ratio]


def cpu_time_ms(fn: Callable[[], object], seconds: float = 0.3) -> float:
    """Process CPU time per call of ``fn`` (all threads), in milliseconds, the least over 3
    rounds of at least ``seconds`` each (after one warm-up call). Unlike wall time it hardly moves
    when other processes share the cores (with passive OpenMP waiting)."""
    fn()
    best = float("inf")
    for _ in range(3):
        calls, start, wall = 0, time.process_time(), time.perf_counter()
        while calls == 0 or time.perf_counter() - wall < seconds:
            fn()
            calls += 1
        best = min(best, (time.process_time() - start) / calls * 1e3)
    return best


def load_average() -> str:
    """The 1-minute load average, for a table column that shows what else ran beside a row."""
    return "{:.1f}".format(os.getloadavg()[0])


def print_mindspore_call_cost(make_calls: Callable[[], Dict[str, Callable[[], object]]], *, quick: bool = False,
                              file: Optional[TextIO] = None) -> None:
    """Print the MindSpore PyNative call cost of an op beside ``ops.add`` (same run; see
    :mod:`ascend_ops.devkit.ms_bench`), or why not. ``make_calls()`` imports mindspore and the
    op's adapter and returns ``{name: call}`` on tiny tensors."""
    try:
        from . import ms_bench  # imports mindspore
    except ImportError as e:
        print(f"MindSpore PyNative call cost: skipped ({e})", file=file)
        return
    rows = ms_bench.pynative_call_cost(make_calls(), rounds=5 if quick else 15)
    print(format_table(ms_bench.CALL_COST_HEADERS, rows), file=file)
    print("target: ratio vs ops.add <= 1.5 (tiny tensors; a batch of calls then one sync, both sides alike)",
          file=file)


def finish(op: str, results: Sequence[Result], out: Path, *,
           mindspore_calls: Callable[[], Dict[str, Callable[[], object]]],
           npu_sim_rows: Callable[[], list], quick: bool = False) -> int:
    """The end every op's ``bench/run.py`` shares: the MindSpore per-call cost, the npu path on
    the simulated runtime (the op's ``bench/npu_sim.py`` rows), then the result files
    ``<out>/<op>.{csv,json,png}``. Returns the exit status (0)."""
    from . import npu_sim_bench

    print()
    print_mindspore_call_cost(mindspore_calls, quick=quick)
    npu_sim_bench.print_rows(npu_sim_rows())
    out.mkdir(parents=True, exist_ok=True)
    write_csv(results, out / f"{op}.csv")
    write_json(results, out / f"{op}.json")
    plot(results, out / f"{op}.png", metric="speedup", logy=True)
    print(f"\nresults: {out}/{op}.csv, .json, .png")
    return 0
