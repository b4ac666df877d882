"""Per-op wall-clock accounting for the demo's engines."""
from __future__ import annotations

import time
from collections import defaultdict
from typing import Callable, Dict, Optional

__all__ = ["GRAPH", "Timer"]

#: The timer bucket of a compiled step: every op and model op inside one graph.
GRAPH = "graph (ops + model)"


class Timer:
    """Accumulates the time spent in wrapped calls, per name.

    Parameters
    ----------
    sync : callable, optional
        Waits for the framework's queued work (MindSpore PyNative runs ops asynchronously). It is
        called before a timed call (so earlier work is not charged to it) and after it (so the
        call's own work is).
    """

    def __init__(self, sync: Optional[Callable[[], None]] = None) -> None:
        self.sync = sync
        self.seconds: Dict[str, float] = defaultdict(float)
        self.calls: Dict[str, int] = defaultdict(int)

    def wrap(self, name: str, fn: Callable) -> Callable:
        """Return ``fn`` timed under ``name``."""
        def timed(*args, **kwargs):
            if self.sync is not None:
                self.sync()
            start = time.perf_counter()
            out = fn(*args, **kwargs)
            if self.sync is not None:
                self.sync()
            self.seconds[name] += time.perf_counter() - start
            self.calls[name] += 1
            return out
        timed.__name__ = getattr(fn, "__name__", name)
        return timed

    def snapshot(self) -> Dict[str, float]:
        return dict(self.seconds)

    def calls_snapshot(self) -> Dict[str, int]:
        return dict(self.calls)
