"""The npu path's host cost per call, on the simulated Ascend runtime, for every op's bench.

``npu_sim_row(label, call, stream)`` warms the configuration up (one call, then a
synchronisation), then times ``calls`` steady-state calls of ``call()`` (each only queues work
on ``stream``: the host time is what the NPU host path costs the caller, the emulated kernels
run on the stream's own thread meanwhile) and reads the runtime's counters around them. A
steady-state call makes 0 synchronisations, 0 copies and 0 allocations.
"""

from __future__ import annotations

import time
from typing import Callable, List

from . import ascend_sim
from ascend_ops.common.table import format_table

__all__ = ["HEADERS", "NOTE", "npu_sim_row", "print_rows"]

HEADERS = ["npu path (simulated runtime)", "syncs/call", "H2D/call", "D2H/call", "D2D/call", "allocs/call",
           "launches/call", "host µs/call"]
NOTE = ("npu path on the simulated Ascend runtime (kernels on the emulator, on the stream's thread): "
        "per steady-state call; host µs = time to validate, tile and queue the call")


def npu_sim_row(label: str, call: Callable[[], None], stream: "ascend_sim.Stream", calls: int = 50) -> List:
    call()
    stream.synchronize()
    before = ascend_sim.counters()
    start = time.perf_counter_ns()
    for _ in range(calls):
        call()
    host_us = (time.perf_counter_ns() - start) / 1e3 / calls
    d = ascend_sim.counters() - before
    stream.synchronize()
    per = lambda n: n / calls  # noqa: E731
    return [label, per(d.synchronizations), per(d.h2d_copies), per(d.d2h_copies), per(d.d2d_copies),
            per(d.allocations), per(d.launches), round(host_us, 2)]


def print_rows(rows: List) -> None:
    """Prints an op's npu_sim rows as the bench's table, with its note; nothing when there are none
    (no simulated runtime in this build)."""
    if rows:
        print()
        print(format_table(HEADERS, rows))
        print(NOTE)
