"""The simulated Ascend runtime itself (libascend_sim): memory poisoning, pinned-only async
copies, in-order streams, capture that refuses synchronisation and allocation, and replay."""
import ctypes

import numpy as np
import pytest

from ascend_ops.devkit import ascend_sim as sim

pytestmark = pytest.mark.skipif(not sim.available(), reason="common built without AOP_WITH_NPU_SIM")
H2D, D2H, D2D = 1, 2, 3


@pytest.fixture()
def stream():
    s = sim.Stream()
    yield s
    s.destroy()


def lib():
    return sim._library()


def pinned(nbytes):
    ptr = ctypes.c_void_p()
    assert lib().aclrtMallocHost(ctypes.byref(ptr), nbytes) == 0
    return ptr.value


def test_freed_device_memory_is_poisoned():
    d = sim.to_device(np.arange(64, dtype=np.uint8))
    ptr, n = d.ptr, d.nbytes
    d.free()
    assert ctypes.string_at(ptr, n) == bytes([sim.POISON]) * n  # quarantined, not reused


def test_async_copy_from_pageable_memory_is_refused(stream):
    d = sim.empty((16,), np.int32)
    host = np.arange(16, dtype=np.int32)
    before = sim.counters()
    rc = lib().aclrtMemcpyAsync(d.ptr, 64, host.ctypes.data, 64, H2D, stream.handle)
    assert rc != 0
    assert (sim.counters() - before).pageable_refused == 1
    src = pinned(64)
    ctypes.memmove(src, host.ctypes.data, 64)
    assert lib().aclrtMemcpyAsync(d.ptr, 64, src, 64, H2D, stream.handle) == 0
    stream.synchronize()
    np.testing.assert_array_equal(d.numpy(), host)
    assert lib().aclrtFreeHost(src) == 0


def test_counters_count_syncs_copies_and_allocations(stream):
    before = sim.counters()
    d = sim.to_device(np.ones(8, np.float32))  # 1 allocation, 1 synchronous H2D copy (a sync)
    stream.synchronize()
    delta = sim.counters() - before
    assert (delta.allocations, delta.h2d_copies, delta.synchronizations) == (1, 1, 2)
    d.free()


def test_capture_refuses_synchronisation_and_allocation(stream):
    before = sim.counters()
    with sim.capture(stream) as graph:
        assert lib().aclrtSynchronizeStream(stream.handle) != 0
        assert lib().aclrtSynchronizeDevice() != 0
        ptr = ctypes.c_void_p()
        assert lib().aclrtMalloc(ctypes.byref(ptr), 64, 0) != 0
    assert (sim.counters() - before).capture_violations == 3
    graph[0].destroy()


def test_captured_work_runs_only_when_replayed(stream):
    a = sim.to_device(np.arange(32, dtype=np.int32))
    b = sim.to_device(np.zeros(32, np.int32))
    with sim.capture(stream) as graph:
        assert lib().aclrtMemcpyAsync(b.ptr, 128, a.ptr, 128, D2D, stream.handle) == 0
    stream.synchronize()
    np.testing.assert_array_equal(b.numpy(), 0)
    before = sim.counters()
    graph[0].replay(stream)
    assert (sim.counters() - before).d2d_copies == 1
    stream.synchronize()
    np.testing.assert_array_equal(b.numpy(), np.arange(32))
    graph[0].destroy()


def test_streams_run_in_order_on_their_own_threads(stream):
    chain = [sim.to_device(np.full(1024, i, np.int32)) for i in range(4)]
    for src, dst in zip(chain, chain[1:]):  # chain[0] -> 1 -> 2 -> 3, only right if in order
        assert lib().aclrtMemcpyAsync(dst.ptr, 4096, src.ptr, 4096, D2D, stream.handle) == 0
    stream.synchronize()
    np.testing.assert_array_equal(chain[3].numpy(), 0)
