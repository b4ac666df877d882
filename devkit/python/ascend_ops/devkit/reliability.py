"""Figures of the reliability runs (fuzz cases, race and soak results), gathered for one table.

The fuzzers, race tests and soak runs call :func:`record`; when ``AOP_RELIABILITY_DIR`` is
set (``./dev fuzz``, ``./dev soak``, ``./dev reliability`` set it) each process writes its
figures there as one JSON file when it exits, and :func:`collect` sums them per op. Without the
variable nothing is written, so the ordinary test run leaves no files behind.
"""

from __future__ import annotations

import atexit
import json
import os
import threading
from collections import defaultdict
from pathlib import Path
from typing import Dict, Optional

__all__ = ["ENV", "record", "flush", "collect", "sanitizer_reports", "table"]

#: The directory the figures go to; unset = do not write.
ENV = "AOP_RELIABILITY_DIR"

_lock = threading.Lock()
_figures: Dict[str, Dict[str, Dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
_registered = False


def record(kind: str, op: str, **figures: float) -> None:
    """Add ``figures`` to those of ``op`` in run ``kind``.

    Parameters
    ----------
    kind : str
        The run: ``"fuzz"``, ``"race"``, ``"soak"``, ...
    op : str
        The op, e.g. ``"my_op"``.
    **figures : float
        Counters to add, e.g. ``cases=1, rejected=1``; a name ending in ``_max`` keeps the
        largest value instead, e.g. ``rss_growth_bytes_max=4096``.
    """
    global _registered
    with _lock:
        _merge(_figures[kind][op], figures)
        if not _registered and os.environ.get(ENV):
            atexit.register(flush)
            _registered = True


def _merge(into: Dict[str, float], figures: Dict[str, float]) -> None:
    for name, value in figures.items():
        if name.endswith("_max"):
            into[name] = max(into.get(name, value), value)
        else:
            into[name] = into.get(name, 0) + value


def flush() -> Optional[Path]:
    """Write this process's figures to ``$AOP_RELIABILITY_DIR/<kind>-<pid>.json`` files.

    Returns the directory, or None when the variable is unset or nothing was recorded.
    """
    target = os.environ.get(ENV)
    if not target:
        return None
    with _lock:
        snapshot = {kind: {op: dict(f) for op, f in ops.items()} for kind, ops in _figures.items()}
    if not snapshot:
        return None
    directory = Path(target)
    directory.mkdir(parents=True, exist_ok=True)
    for kind, ops in snapshot.items():
        (directory / f"{kind}-{os.getpid()}.json").write_text(json.dumps(ops, indent=1, sort_keys=True))
    return directory


def collect(directory: Path) -> Dict[str, Dict[str, Dict[str, float]]]:
    """Sum the figures written to ``directory``: ``{kind: {op: {name: value}}}``.

    Counters are added across processes; names ending in ``_max`` keep the largest value.
    """
    out: Dict[str, Dict[str, Dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for path in sorted(Path(directory).glob("*-*.json")):
        kind = path.name.rsplit("-", 1)[0]
        for op, figures in json.loads(path.read_text()).items():
            _merge(out[kind][op], figures)
    return {kind: dict(ops) for kind, ops in out.items()}


def sanitizer_reports(directory: Path) -> Dict[str, int]:
    """Reports per op in a directory of sanitizer logs (``<op>.<run>-asan.<pid>`` files)."""
    counts: Dict[str, int] = defaultdict(int)
    for path in Path(directory).glob("*san.*"):
        label = path.name.split(".", 1)[0]
        text = path.read_text(errors="replace")
        counts[label] += max(1, text.count("ERROR: AddressSanitizer") + text.count("runtime error:"))
    return dict(counts)


def table(run_dir: Path) -> str:
    """The markdown table of a ``./dev reliability`` run directory (figures/, sanitizer/,
    steps.tsv)."""
    run_dir = Path(run_dir)
    figures = collect(run_dir / "figures") if (run_dir / "figures").is_dir() else {}
    reports = sanitizer_reports(run_dir / "sanitizer") if (run_dir / "sanitizer").is_dir() else {}
    ops = sorted({op for kind in figures.values() for op in kind} | (set(reports) - {"common"}))
    fuzz, race, soak = (figures.get(k, {}) for k in ("fuzz", "race", "soak"))
    lines = ["| op | fuzz cases (sanitizer build) | of them rejected as documented | sanitizer reports | "
             "race failures / iterations | soak calls | RSS growth after warm-up |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for op in ops:
        f, r, s = fuzz.get(op, {}), race.get(op), soak.get(op)
        race_cell = (f"{int(r.get('stale_reads', 0) + r.get('lost_writes', 0))} / {int(r['iterations'])}"
                     if r else "n/a (not in place)")
        soak_cells = ([f"{int(s['calls']):,}", f"{s['rss_growth_bytes_max'] / 1024:.0f} KiB"] if s else ["-", "-"])
        lines.append(f"| {op} | {int(f.get('cases', 0)):,} | {int(f.get('rejected', 0)):,} | {reports.get(op, 0)} | "
                     f"{race_cell} | {' | '.join(soak_cells)} |")
    steps = run_dir / "steps.tsv"
    if steps.is_file():
        lines += ["", "| step | result | minutes |", "|---|---|---:|"]
        for row in steps.read_text().splitlines():
            name, rc, seconds = row.split("\t")
            lines.append(f"| {name} | {'passed' if rc == '0' else f'FAILED (exit {rc})'} | {int(seconds) / 60:.1f} |")
    if reports.get("common"):
        lines.append(f"\ncommon's C++ tests: {reports['common']} sanitizer reports")
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    if len(sys.argv) != 2:
        sys.exit("usage: python -m ascend_ops.devkit.reliability RUN_DIR  (./dev reliability writes build/reliability)")
    print(table(Path(sys.argv[1])))
