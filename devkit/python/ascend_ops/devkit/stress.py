"""Concurrency tests of ops: many threads, shared caches too small for the work.

:func:`small_caches` bounds the process-wide tiling and operator caches (so entries are
evicted while other threads use them), :func:`run_threads` starts the threads together and
re-raises the first failure, :class:`CacheCounters` checks afterwards that the counters add up:
every lookup is a hit or a miss, entries = inserts - evictions <= capacity.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Sequence

import numpy as np

import ascend_ops.common as runtime

__all__ = ["small_caches", "run_threads", "CacheCounters", "hammer"]


@contextlib.contextmanager
def small_caches(capacity: int = 2) -> Iterator[None]:
    """Both caches emptied, counters zeroed and bounded to ``capacity`` entries; the previous
    capacities come back afterwards (the entries do not)."""
    previous = {c["name"]: c["capacity"] for c in runtime.cache_stats() if c["name"] in runtime.CACHE_NAMES}
    for which in runtime.CACHE_NAMES:
        runtime.set_cache_capacity(which, capacity)
    runtime.clear_caches(reset_stats=True)
    try:
        yield
    finally:
        runtime.clear_caches(reset_stats=True)
        for which, n in previous.items():
            runtime.set_cache_capacity(which, n)


def run_threads(work: Callable[[int], None], threads: int = 8) -> None:
    """Run ``work(t)`` for ``t < threads`` in that many threads, released together by a
    barrier; re-raise the first exception (naming its thread) after all have finished."""
    barrier = threading.Barrier(threads)
    errors: List[tuple] = []

    def body(t: int) -> None:
        barrier.wait()
        try:
            work(t)
        except BaseException as exc:  # noqa: BLE001  (re-raised in the caller's thread)
            errors.append((t, exc))

    pool = [threading.Thread(target=body, args=(t,), name=f"stress-{t}") for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    if errors:
        t, exc = errors[0]
        raise AssertionError(f"thread {t} of {threads} failed ({len(errors)} failed): "
                             f"{type(exc).__name__}: {exc}") from exc


@dataclass(frozen=True)
class CacheCounters:
    """The counters of the tiling and operator caches at one moment."""

    stats: Dict[str, Dict[str, int]]

    @classmethod
    def now(cls) -> "CacheCounters":
        return cls({c["name"]: dict(c) for c in runtime.cache_stats() if c["name"] in runtime.CACHE_NAMES})

    def lookups(self, which: str) -> int:
        s = self.stats[which]
        return s["hits"] + s["misses"]

    def check_consistent(self) -> None:
        """Counters since the last reset (an empty cache) add up, for both caches."""
        for name, s in self.stats.items():
            assert s["size"] <= s["capacity"], f"cache {name}: {s['size']} entries > capacity {s['capacity']}"
            assert s["inserts"] <= s["misses"], f"cache {name}: {s['inserts']} inserts > {s['misses']} misses"
            assert s["size"] == s["inserts"] - s["evictions"], \
                f"cache {name}: {s['size']} entries != {s['inserts']} inserts - {s['evictions']} evictions"


def hammer(cases: Sequence[Any], call: Callable[[Any], Any], compare: Callable[[Any, Any, int], None], *,
           rounds: int, tiled: bool, threads: int = 8, capacity: int = 2) -> CacheCounters:
    """The concurrency test of an op, with both caches bounded to ``capacity`` entries.

    Each case is first run alone to count its tiling-cache lookups; then ``threads`` threads
    each run every case ``rounds`` times in their own random order, ``compare(case, result,
    index)`` checking each result. Afterwards the counters must add up, the lookups equal
    those of the same calls made one at a time, and, where the calls use the tiling cache
    (``tiled``), entries must have been evicted (else the test lost its point).

    Returns the counters at the end.
    """
    with small_caches(capacity):
        lookups = []
        for case in cases:
            before = CacheCounters.now().lookups("tiling")
            call(case)
            lookups.append(CacheCounters.now().lookups("tiling") - before)
        assert all(n > 0 for n in lookups) if tiled else not any(lookups), f"tiling lookups per case: {lookups}"
        start = CacheCounters.now()

        def work(t: int) -> None:
            for r in range(rounds):
                for i in np.random.default_rng(t * 1000 + r).permutation(len(cases)):
                    compare(cases[i], call(cases[i]), int(i))

        run_threads(work, threads)
        end = CacheCounters.now()
    end.check_consistent()
    assert end.lookups("tiling") - start.lookups("tiling") == threads * rounds * sum(lookups)
    if tiled:
        assert end.stats["tiling"]["evictions"] > 0, "the cache was never full: the test lost its point"
    return end
