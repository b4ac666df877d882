"""MindSpore PyNative call cost, shared by the ops' ``bench/run.py`` (needs mindspore).

:func:`pynative_call_cost` times an op's PyNative call on tiny tensors beside the call of a
built-in op, ``ops.add`` on two 4-element float32 tensors, in the same run. Both sides are
timed the same way: a batch of calls, then one host synchronisation (so MindSpore's queues
cannot grow without bound and the time covers the queued work too), divided by the batch size.
The two sides alternate round by round, so load on the machine falls on both; the median round
of each is reported with the ratio ``op / ops.add`` (target: <= 1.5).
"""
from __future__ import annotations

import statistics
import time
from typing import Callable, Dict, List

import mindspore as ms
import numpy as np
from mindspore import ops

__all__ = ["pynative_call_cost", "CALL_COST_HEADERS"]

CALL_COST_HEADERS = ["MindSpore PyNative call", "p50 µs", "ops.add p50 µs", "ratio vs ops.add"]


def _batch_time(call: Callable[[], object], sync: Callable[[], object], batch: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(batch):
        call()
    sync()
    return (time.perf_counter_ns() - start) / batch / 1e3


def pynative_call_cost(calls: Dict[str, Callable[[], object]], *, batch: int = 200, rounds: int = 15,
                       warmup: int = 2) -> List[list]:
    """Rows ``[name, p50 µs, ops.add p50 µs, ratio]``, one per entry of ``calls``.

    Every call in ``calls`` must run in PyNative mode on tensors it already holds (set them up
    once, outside the call). ``rounds`` alternating rounds of ``batch`` calls each are timed.
    """
    a = ms.Tensor(np.ones(4, np.float32))
    builtin = lambda: ops.add(a, a)  # noqa: E731

    def sync() -> None:
        (a + 0).asnumpy()

    rows = []
    for name, call in calls.items():
        for _ in range(warmup):
            _batch_time(builtin, sync, batch)
            _batch_time(call, sync, batch)
        ours: List[float] = []
        theirs: List[float] = []
        for _ in range(rounds):
            theirs.append(_batch_time(builtin, sync, batch))
            ours.append(_batch_time(call, sync, batch))
        op_us, add_us = statistics.median(ours), statistics.median(theirs)
        rows.append([name, op_us, add_us, op_us / add_us])
    return rows
