"""Runs the demo in every mode, checks the tokens against the NumPy reference, reports times."""
from __future__ import annotations

import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, TextIO

import numpy as np

from ascend_ops.common.errors import AdapterNotBuilt, FrameworkMissing
from ascend_ops.common.frameworks import is_installed
from ascend_ops.common.table import format_table

from . import reference
from .model import Config, Plan, kv_scales, plan as make_plan, weights as make_weights
from .timing import GRAPH as GRAPH_BUCKET, Timer

__all__ = ["MODES", "OPS", "ModeResult", "Report", "run", "run_mode", "write_plot"]

#: The modes, in the order they run.
MODES = ("torch eager", "torch compile", "mindspore pynative", "mindspore graph")
#: The ops the engines time one by one in eager modes (indexer_k_quant_and_cache: int8 caches).
OPS = ("reshape_and_cache", "indexer_k_quant_and_cache", "lightning_indexer", "lightning_indexer_quant",
       "sparse_flash_attention", "adv_step_flash")
#: The sensitivity run of int8 caches: every code closer than this (relative) to a rounding
#: boundary takes its other neighbour; the reference's tokens must not change.
FLIP_BELOW = 1e-4
OTHER = "framework ops + host"

OK, MISMATCH, FAILED, SKIPPED = "match", "MISMATCH", "FAILED", "skipped"


@dataclass
class ModeResult:
    """One mode's run. Times in seconds; ``step_ops`` sums the measured decode steps (every step
    after the first, which includes compilation in the compiled modes)."""

    mode: str
    status: str = FAILED
    detail: str = ""
    tokens: Optional[np.ndarray] = None
    setup_s: float = 0.0
    prefill_s: float = 0.0
    step_s: List[float] = field(default_factory=list)
    step_ops: Dict[str, float] = field(default_factory=dict)
    compiled: bool = False

    @property
    def measured(self) -> List[float]:
        return self.step_s[1:] or self.step_s

    @property
    def ms_per_step(self) -> Optional[float]:
        return 1e3 * sum(self.measured) / len(self.measured) if self.step_s else None

    def breakdown(self) -> Dict[str, float]:
        """ms per measured decode step: each timed bucket, then the rest of the step."""
        if not self.step_s:
            return {}
        n = len(self.measured)
        out = {name: 1e3 * s / n for name, s in self.step_ops.items()}
        out[OTHER] = max(self.ms_per_step - sum(out.values()), 0.0)
        return out


@dataclass
class Report:
    cfg: Config
    ref: reference.Result
    results: List[ModeResult]
    sensitivity: Optional[reference.Result] = None  # int8 caches: the reference with boundary codes flipped

    @property
    def exit_status(self) -> int:
        if any(r.status in (MISMATCH, FAILED) for r in self.results):
            return 1
        return 0 if any(r.status == OK for r in self.results) else 1


def _progress(err: TextIO, label: str, done: int, total: int, start: float) -> None:
    width = 24
    filled = width * done // total
    line = f"{label:<19} [{'#' * filled}{'.' * (width - filled)}] {done:>3}/{total} steps {time.perf_counter() - start:6.1f} s"
    tty = getattr(err, "isatty", lambda: False)()
    if tty:
        err.write("\r" + line + ("\n" if done == total else ""))
        err.flush()
    elif done == total:
        err.write(line + "\n")


def _engine(mode: str, cfg: Config, w: Dict[str, np.ndarray], p: Plan, timer: Timer, torch_backend: str,
            scales: Optional[List]):
    framework = mode.split()[0]
    if not is_installed(framework):
        raise FrameworkMissing(f"{framework} is not installed")
    if framework == "torch":
        from .torch_engine import TorchEngine

        return TorchEngine(cfg, w, p, compiled=mode == "torch compile", timer=timer, backend=torch_backend,
                           scales=scales)
    import mindspore  # noqa: F401  (before the adapters: numpy < 2 beside mindspore 2.10)

    from .mindspore_engine import MindSporeEngine

    return MindSporeEngine(cfg, w, p, graph=mode == "mindspore graph", timer=timer, scales=scales)


def run_mode(mode: str, cfg: Config, w: Dict[str, np.ndarray], p: Plan, want: np.ndarray, *,
             err: TextIO = sys.stderr, torch_backend: str = "inductor", scales: Optional[List] = None) -> ModeResult:
    """Prefill, then ``cfg.steps`` decode steps in ``mode``; compare with ``want`` [B, steps + 1].
    ``scales``: the static latent / rope scales of int8 caches (:func:`.model.kv_scales`)."""
    result = ModeResult(mode, compiled=mode in ("torch compile", "mindspore graph"))
    timer = Timer()
    start = time.perf_counter()
    try:
        engine = _engine(mode, cfg, w, p, timer, torch_backend, scales)
        result.setup_s = time.perf_counter() - start
        t0 = time.perf_counter()
        tokens = [engine.prefill()]
        result.prefill_s = time.perf_counter() - t0
        _progress(err, mode, 0, cfg.steps, start)
        for i in range(cfg.steps):
            if i == 1:
                before = timer.snapshot()
            t0 = time.perf_counter()
            tokens.append(engine.step())
            result.step_s.append(time.perf_counter() - t0)
            _progress(err, mode, i + 1, cfg.steps, start)
        after = timer.snapshot()
        if cfg.steps == 1:
            before = {}  # the one step is all there is (it includes compilation where there is some)
        else:
            before = {k: before.get(k, 0.0) for k in after}
        result.step_ops = {k: after[k] - before.get(k, 0.0) for k in after}
    except (FrameworkMissing, AdapterNotBuilt, ModuleNotFoundError) as exc:
        result.status, result.detail = SKIPPED, f"{type(exc).__name__}: {exc}".splitlines()[0]
        return result
    except Exception as exc:  # a failed mode is a result of the demo, never a crash of the report
        result.status = FAILED
        result.detail = f"{type(exc).__name__}: {exc}".strip().splitlines()[0][:300]
        err.write(f"\n{mode} failed:\n{traceback.format_exc()}\n")
        return result
    got = np.stack(tokens, axis=1)
    result.tokens = got
    if np.array_equal(got, want):
        result.status, result.detail = OK, f"{got.size}/{want.size} tokens"
    else:
        b, s = map(int, np.argwhere(got != want)[0])
        result.status = MISMATCH
        result.detail = (f"{int((got != want).sum())}/{want.size} tokens differ; first: sequence {b}, token {s}: "
                         f"got {int(got[b, s])}, reference {int(want[b, s])}")
    return result


def write_plot(report: Report, path: Path) -> Path:
    """A stacked bar per mode: ms per decode step, split into the timed buckets."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = [r for r in report.results if r.step_s]
    if not rows:
        raise ValueError("demo --plot: no mode ran, nothing to plot")
    buckets = list(OPS) + [GRAPH_BUCKET, OTHER]
    fig = Figure(figsize=(9, 1.2 + 0.7 * len(rows)), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    left = np.zeros(len(rows))
    for bucket in buckets:
        widths = np.array([r.breakdown().get(bucket, 0.0) for r in rows])
        if widths.any():
            ax.barh([r.mode for r in rows], widths, left=left, label=bucket)
            left += widths
    for y, r in enumerate(rows):
        ax.text(left[y], y, f"  {r.ms_per_step:.1f} ms", va="center", fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("ms per decode step (steps after the first)")
    ax.set_xlim(0, left.max() * 1.2)
    ax.set_title(f"ascend-ops demo: {report.cfg.batch} sequences, {report.cfg.layers} layers, "
                 f"top-{report.cfg.sparse_count} sparse attention (compiled modes: no per-op split inside the graph)",
                 fontsize=9)
    ax.legend(fontsize=8, loc="lower right")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    return path


def _print_report(report: Report, p: Plan, out: TextIO) -> None:
    cfg = report.cfg
    rows = []
    for r in report.results:
        tps = cfg.batch * len(r.measured) / sum(r.measured) if r.step_s else None
        first = 1e3 * r.step_s[0] if r.step_s else None
        rows.append([r.mode, r.status, r.detail, 1e3 * r.prefill_s if r.step_s else None, first, r.ms_per_step, tps])
    print(format_table(["mode", "tokens", "detail", "prefill ms", "1st step ms", "ms/step", "tokens/s"], rows),
          file=out)
    ran = [r for r in report.results if r.step_s]
    if ran:
        buckets = [b for b in list(OPS) + [GRAPH_BUCKET, OTHER] if any(b in r.breakdown() for r in ran)]
        print(f"\ntime per decode step, ms (mean of steps 2..{cfg.steps}; the first includes compilation):",
              file=out)
        table = []
        for r in ran:
            parts = r.breakdown()
            table.append([r.mode] + [parts.get(b) for b in buckets] + [r.ms_per_step])
        print(format_table(["mode"] + buckets + ["total"], table), file=out)
        print(f"\n- eager modes time each op call; MindSpore PyNative waits for its queue before and after "
              f"each op (so the op's own time is its own).\n"
              f"- compiled modes: reshape_and_cache, lightning_indexer, sparse_flash_attention and the MLP of every "
              f"layer run inside one graph\n  (\"{GRAPH_BUCKET}\"): no per-op breakdown is available there; "
              f"adv_step_flash runs between steps, outside the graph.\n"
              f"- torch compile compiles the decode step; its prefill runs eager. MindSpore graph compiles both.",
              file=out)
    print(f"\nreference tokens of sequence 0 (prompt {p.prompts[0, :p.prompt_lens[0]].tolist()}): "
          f"{report.ref.tokens[0].tolist()}", file=out)
    ok = [r.mode for r in report.results if r.status == OK]
    bad = [r.mode for r in report.results if r.status in (MISMATCH, FAILED)]
    skipped = [f"{r.mode} ({r.detail})" for r in report.results if r.status == SKIPPED]
    if ok:
        print(f"\n{len(ok)} mode(s) produced exactly the reference tokens: {', '.join(ok)}", file=out)
    if skipped:
        print(f"skipped: {'; '.join(skipped)}", file=out)
    if bad:
        print(f"FAILED: {', '.join(bad)}", file=out)
    elif not ok:
        print("FAILED: no mode ran", file=out)


def run(cfg: Config, modes: Sequence[str] = MODES, *, out: TextIO = sys.stdout, err: TextIO = sys.stderr,
        plot: Optional[Path] = None, torch_backend: str = "inductor") -> Report:
    """Run the reference, then every mode of ``modes``; print the report; return it."""
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise ValueError(f"demo: unknown mode(s) {unknown}; modes are {list(MODES)}")
    w, p = make_weights(cfg), make_plan(cfg)
    ref = reference.generate(cfg, w, p)
    scales = sensitivity = None
    if cfg.quantized:  # calibrated on the float model, as a checkpoint's C8 scales are
        scales = kv_scales(cfg, ref.cache_amax)
        ref = reference.generate(cfg, w, p, scales)
        sensitivity = reference.generate(cfg, w, p, scales, flip_below=FLIP_BELOW)
    print("ascend-ops demo: DeepSeek-V3.2-style sparse-attention decode on a paged KV cache", file=out)
    print(f"model:     {cfg.describe()}", file=out)
    longest = max(cfg.prompt_lens) + cfg.steps
    print(f"batch:     {cfg.batch} sequences, prompts of {', '.join(map(str, cfg.prompt_lens))} tokens, "
          f"{cfg.steps} decode steps ({cfg.steps + 1} tokens each, greedy)", file=out)
    print(f"cache:     per layer {p.num_blocks} blocks x {cfg.block_size} slots, shuffled block tables; the "
          f"indexer keeps the top {cfg.sparse_count} of up to {longest} tokens", file=out)
    print(f"engine:    prefill: reshape_and_cache (latent + rope, indexer key) -> lightning_indexer -> "
          f"sparse_flash_attention (absorbed MLA over the selected tokens); each step: the same, greedy sample, "
          f"adv_step_flash", file=out)
    if cfg.quantized:
        print("           int8 caches: reshape_and_cache kv_cache_dtype=\"int8\" (static per-channel scales "
              "calibrated on the float model) and indexer_k_quant_and_cache (int8 + a float32 scale per token); "
              "the indexer is lightning_indexer_quant (int8 queries, a scale per token and head, on the int8 "
              "index cache); the attention reads dequantized copies", file=out)
    print(f"reference: NumPy float64, dense (no paging, no ops): smallest greedy margin {ref.min_logit_margin:.1e}, "
          f"smallest indexer top-k boundary gap {ref.min_index_gap:.1e} (relative to the row's largest value; "
          f"float32 rounding ~1e-6) over {ref.selections} selections ({ref.zero_ties} exact ties of zero scores, "
          f"broken by position)", file=out)
    if sensitivity is not None:
        same = np.array_equal(sensitivity.tokens, ref.tokens)
        print(f"int8:      the reference stores the caches' codes too; smallest distance of a code's quotient to a "
              f"rounding boundary {ref.min_code_margin:.1e} (relative): below float32 rounding an engine may store "
              f"the neighbouring code, so the reference was rerun with all {sensitivity.flipped} codes closer than "
              f"{FLIP_BELOW:.0e} flipped: tokens {'unchanged' if same else 'CHANGED (agreement would be luck)'}",
              file=out)
    out.flush()
    results = []
    for mode in modes:
        results.append(run_mode(mode, cfg, w, p, ref.tokens, err=err, torch_backend=torch_backend, scales=scales))
        if results[-1].status == SKIPPED:
            err.write(f"{mode:<19} skipped: {results[-1].detail}\n")
    report = Report(cfg, ref, results, sensitivity)
    print("", file=out)
    _print_report(report, p, out)
    if plot is not None:
        try:
            path = write_plot(report, plot)
            print(f"plot: {path}", file=out)
        except (ImportError, ValueError) as exc:
            print(f"plot not written: {type(exc).__name__}: {exc}", file=out)
            results.append(ModeResult("plot", FAILED, str(exc)))
    return report
