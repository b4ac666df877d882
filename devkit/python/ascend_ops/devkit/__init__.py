"""ascend-op-devkit: the development tooling of ascend-ops, never installed in an inference image.

The shared test and benchmark tools of every op's ``tests/`` and ``bench/``:
:mod:`~ascend_ops.devkit.testing` (seeded random cases, bfloat16 bit helpers),
:mod:`~ascend_ops.devkit.fuzzing`, :mod:`~ascend_ops.devkit.stress`, :mod:`~ascend_ops.devkit.soak`,
:mod:`~ascend_ops.devkit.reliability`, :mod:`~ascend_ops.devkit.compile_matrix`,
:mod:`~ascend_ops.devkit.npu_compile_check`, :mod:`~ascend_ops.devkit.torchair_testing`,
:mod:`~ascend_ops.devkit.ms_ascend_testing`, :mod:`~ascend_ops.devkit.ascend_sim` (the Python side
of common's simulated Ascend runtime) and the benchmark harness :mod:`~ascend_ops.devkit.bench`
(with ``torch_bench``, ``ms_bench``, ``npu_sim_bench``). Every module imports its heavy
dependencies (hypothesis, torch, mindspore, matplotlib) itself; importing this package imports none.
"""

from ._version import __version__

__all__ = ["__version__"]
