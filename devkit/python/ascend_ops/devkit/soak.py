"""Soak runs: an op called a million times in one process, its memory and counters watched.

Each op's ``bench/soak.py`` builds a workload (one call per step, a few shapes in turn, now
and then a call that must fail) and hands it to :func:`main`; ``./dev soak`` runs them all.
The resident set size (psutil) is read after a warm-up and then every
1/20th of the run; its growth past the warm-up must stay under :data:`RSS_LIMIT_BYTES`.
"""

from __future__ import annotations

import argparse
import gc
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence

import psutil

import ascend_ops.common as runtime

from . import reliability

__all__ = ["RSS_LIMIT_BYTES", "SoakResult", "rss_bytes", "rotation", "soak", "main"]

#: Allowed growth of the resident set after the warm-up.
RSS_LIMIT_BYTES = 1 << 20

def rss_bytes() -> int:
    """The resident set size of this process, in bytes."""
    return psutil.Process().memory_info().rss


@dataclass
class SoakResult:
    """What one soak run measured."""

    op: str
    calls: int
    seconds: float
    rss_after_warmup_bytes: int
    rss_end_bytes: int
    rss_growth_max_bytes: int  # the largest sample minus the post-warm-up one
    checks: int
    cache_delta: Dict[str, Dict[str, int]] = field(default_factory=dict)
    pools: List[dict] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.rss_growth_max_bytes < RSS_LIMIT_BYTES


def _cache_counters() -> Dict[str, Dict[str, int]]:
    keys = ("hits", "misses", "inserts", "evictions", "size", "capacity")
    return {c["name"]: {k: int(c[k]) for k in keys} for c in runtime.cache_stats()}


def soak(op: str, step: Callable[[int], None], *, calls: int, warmup: int,
         check: Optional[Callable[[], None]] = None, samples: int = 20) -> SoakResult:
    """Call ``step(i)`` for ``i < calls``, sampling the RSS ``samples`` times after ``warmup``.

    ``check()`` (a golden comparison) runs at every sample; it raises on a wrong result.
    """
    if not 0 < warmup < calls:
        raise ValueError(f"soak: need 0 < warmup < calls, got warmup={warmup}, calls={calls}")
    every = max(1, (calls - warmup) // samples)
    caches_before = _cache_counters()
    started = time.perf_counter()
    for i in range(warmup):
        step(i)
    if check is not None:
        check()  # its own first allocations belong to the warm-up
    gc.collect()
    base = rss_bytes()
    peak, checks = base, 0
    for i in range(warmup, calls):
        step(i)
        if (i - warmup + 1) % every == 0:
            if check is not None:
                check()
                checks += 1
            gc.collect()
            peak = max(peak, rss_bytes())
    gc.collect()
    end = rss_bytes()
    seconds = time.perf_counter() - started
    after = _cache_counters()
    delta = {name: {k: v - caches_before.get(name, {}).get(k, 0) if k not in ("size", "capacity") else v
                    for k, v in counters.items()} for name, counters in after.items()}
    return SoakResult(op=op, calls=calls, seconds=seconds, rss_after_warmup_bytes=base, rss_end_bytes=end,
                      rss_growth_max_bytes=max(peak, end) - base, checks=checks, cache_delta=delta,
                      pools=[dict(p) for p in runtime.pool_stats()])


def rotation(cases: Sequence[object], *, valid: Callable[[object], None], invalid: Callable[[object], None],
             error: type, what: str, bad_every: int = 100) -> Callable[[int], None]:
    """The ``step(i)`` of a soak over ``cases`` in turn: ``valid(case)`` makes a good call, and
    every ``bad_every``-th call ``invalid(case)`` must raise ``error`` (``what`` names the
    fault in the AssertionError when it does not)."""
    def step(i: int) -> None:
        case = cases[i % len(cases)]
        if i % bad_every != bad_every - 1:
            valid(case)
            return
        try:
            invalid(case)
        except error:
            return
        raise AssertionError(f"{what} did not raise {error.__name__}")
    return step


def _report(r: SoakResult) -> str:
    kib = 1024
    lines = [
        f"{r.op}: {r.calls:,} calls in {r.seconds:.1f} s ({r.seconds / r.calls * 1e6:.1f} us/call), "
        f"{r.checks} golden checks",
        f"  RSS after warm-up {r.rss_after_warmup_bytes / kib / kib:.1f} MiB, at the end "
        f"{r.rss_end_bytes / kib / kib:.1f} MiB, largest growth {r.rss_growth_max_bytes / kib:.0f} KiB "
        f"(limit {RSS_LIMIT_BYTES / kib:.0f} KiB): {'ok' if r.passed else 'FAILED'}",
    ]
    for name, c in r.cache_delta.items():
        lines.append(f"  cache {name}: +{c['hits']} hits, +{c['misses']} misses, +{c['evictions']} evictions, "
                     f"size {c['size']}/{c['capacity']}")
    for p in r.pools:
        lines.append(f"  pool {p['name']}: in use {p['in_use_bytes']} B, cached {p['cached_bytes']} B, "
                     f"peak {p['peak_bytes']} B, {p['allocations']} allocations, {p['reuses']} reuses, "
                     f"{p['live_blocks']} live blocks")
    return "\n".join(lines)


def main(op: str, make: Callable[[], tuple], argv: Optional[Sequence[str]] = None) -> int:
    """Command line of an op's ``bench/soak.py``.

    ``make()`` returns ``(step, check)``: ``step(i)`` makes call ``i``, ``check()`` compares
    the current outputs with the golden reference. Prints the figures, records them for
    ``./dev reliability`` and returns 0, or 1 when the RSS grew past the limit.
    """
    parser = argparse.ArgumentParser(description=f"Soak {op}: many calls in one process, RSS watched.")
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--warmup", type=int, default=None, help="calls before the first RSS sample "
                        "(default: 5%% of --calls)")
    parser.add_argument("--cache-size", type=int, default=2, help="capacity of the tiling and operator "
                        "caches during the run (default 2: fewer entries than shapes, so entries are evicted)")
    args = parser.parse_args(argv)
    for which in runtime.CACHE_NAMES:
        runtime.set_cache_capacity(which, args.cache_size)
    step, check = make()
    result = soak(op, step, calls=args.calls, warmup=args.warmup or max(1, args.calls // 20), check=check)
    print(_report(result), flush=True)
    reliability.record("soak", op, calls=result.calls, seconds=result.seconds,
                       rss_growth_bytes_max=result.rss_growth_max_bytes, failed=0 if result.passed else 1)
    return 0 if result.passed else 1

