"""Through torch, the CPU kernels run on torch's intra-op threads, not on a second pool.

In a fresh interpreter with torch.set_num_threads(2): after a torch matmul has created torch's
OpenMP team, large reshape_and_cache calls through torch start no thread of their own (the
process's thread count stays the same); with an explicit count
(ascend_ops.common.set_num_threads), the same calls run on common's pool, whose workers appear.
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("torch is not installed", allow_module_level=True)

SCRIPT = textwrap.dedent("""
    import os
    import torch
    import ascend_ops.reshape_and_cache
    from ascend_ops.common import set_num_threads

    def threads():
        return len(os.listdir("/proc/self/task"))

    torch.set_num_threads(2)
    a = torch.randn(256, 256)
    torch.mm(a, a)  # torch's OpenMP team now exists
    T, H, D = 4096, 8, 64
    key, value = torch.randn(T, H, D), torch.randn(T, H, D)
    kc, vc = torch.zeros(T // 16, 16, H, D), torch.zeros(T // 16, 16, H, D)
    slots = torch.randperm(T)
    op = torch.ops.ascend_ops.reshape_and_cache
    before = threads()
    for _ in range(3):
        op(key, value, kc, vc, slots)
    on_torch = threads()
    assert torch.equal(kc.view(-1, H, D)[slots], key)
    set_num_threads(2)
    op(key, value, kc, vc, slots)
    on_own_pool = threads()
    print(before, on_torch, on_own_pool)
""")


def test_torch_calls_start_no_threads_of_their_own():
    env = {k: v for k, v in os.environ.items() if k not in ("ASCEND_OPS_NUM_THREADS", "OMP_NUM_THREADS")}
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    before, on_torch, on_own_pool = map(int, proc.stdout.split())
    assert on_torch == before, f"calls through torch started {on_torch - before} thread(s) of their own"
    assert on_own_pool > on_torch, "an explicit count should run on common's pool (its workers start)"
