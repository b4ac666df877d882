"""Benchmark pieces that need torch, shared by the ops' ``bench/run.py``.

:func:`first_call_after_matmul` measures what a CPU op costs right after a torch OpenMP op
(torch's workers still spinning) against a settled call, once on torch's intra-op pool (the
default through the torch front door) and once on common's own pool (what an explicit thread
count selects): two pools of busy threads on the same cores are what made the first call slow.
"""
from __future__ import annotations

import statistics
import time
from typing import Callable, List

import torch

from ascend_ops.common import num_threads, set_num_threads

__all__ = ["first_call_after_matmul"]


def _first_and_settled(call: Callable[[], object], rounds: int, matmul_size: int) -> tuple:
    a = torch.randn(matmul_size, matmul_size)
    first: List[float] = []
    for _ in range(rounds):
        torch.mm(a, a)
        start = time.perf_counter_ns()
        call()
        first.append((time.perf_counter_ns() - start) / 1e3)
    for _ in range(3):
        call()
    settled: List[float] = []
    for _ in range(rounds):
        start = time.perf_counter_ns()
        call()
        settled.append((time.perf_counter_ns() - start) / 1e3)
    return statistics.median(first), statistics.median(settled)


def first_call_after_matmul(call: Callable[[], object], *, rounds: int = 30, matmul_size: int = 512) -> list:
    """Rows ``[pool, threads, first call µs, settled call µs, first / settled]`` (medians).

    ``call`` runs the op through the torch front door. "torch pool" is the default
    (``torch.get_num_threads()`` threads); "own pool" sets an explicit count equal to it with
    :func:`~ascend_ops.common.set_num_threads`, which moves the op to common's pool.
    """
    rows = []
    threads = torch.get_num_threads()
    for pool in ("torch pool", "own pool"):
        set_num_threads(threads if pool == "own pool" else 0)
        try:
            used = threads if pool == "torch pool" else num_threads()
            first, settled = _first_and_settled(call, rounds, matmul_size)
        finally:
            set_num_threads(0)
        rows.append([pool, used, first, settled, first / settled if settled > 0 else float("nan")])
    return rows
