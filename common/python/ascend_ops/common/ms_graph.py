"""Which MindSpore primitive an op's ``ms.py`` calls: the CPU (aot) one or, on Ascend, the one
MindSpore's op-definition route generates (``CustomOpBuilder(backend="Ascend", op_def=<yaml>)``).

The Ascend primitive is built ahead of time, never at import: where the mindspore wheel's Ascend
plugin and CANN are (``AOP_WITH_MINDSPORE_ASCEND``), CMake runs MindSpore's own generator
(``ops_generate/gen_custom_ops.py``, what ``CustomOpBuilder.load()`` runs) on the op's
``mindspore/ascend/*_op.yaml``: the OpDef is compiled into ``_ms`` beside the KernelMod
(``MS_CUSTOM_OPS_REGISTER``), the primitive class is installed as ``ascend_ops/<op>/_ms_graph.py``.

What every op's ``ms.py`` does with it: ``device_target="CPU"`` always; ``"Ascend"`` only in a
build with the mindspore wheel's Ascend plugin and CANN (``AOP_MS_ASCEND``: the PyNative call runs
the AscendC kernel on MindSpore's current stream; compile-checked here, not run on NPU). On Ascend
the op's function calls the generated graph primitive (``_ms_graph.py``, chosen here when a graph
is compiled; eagerly it runs the PyNative entry). Elsewhere, or where that was not built, the op
raises ``RuntimeError`` naming the op and why instead of handing device memory to the CPU kernel;
``ascend-ops list`` shows which.

Both helpers are ``constexpr``: a graph (GRAPH_MODE, ``ms.jit``) evaluates them when it is
compiled, so the branch in ``ms.py`` is folded and the chosen primitive is what the graph records.
Import mindspore before this module.
"""
from __future__ import annotations

import importlib
from typing import Any

import mindspore as ms
from mindspore.ops.primitive import constexpr

__all__ = ["device_target", "on_ascend", "npu_primitive"]


def device_target() -> str:
    """MindSpore's device_target (a function, so tests can fake it). ``get_current_device`` (2 µs)
    rather than ``get_context`` (10 µs): every PyNative call of an op's function asks."""
    return ms.get_current_device().device_target


@constexpr
def on_ascend() -> bool:
    """True when MindSpore runs on Ascend: ``ms.py`` then calls :func:`npu_primitive`'s primitive."""
    return device_target() == "Ascend"


def _build_info(op: str) -> Any:
    return importlib.import_module(f"ascend_ops.{op}._build_info")


@constexpr
def npu_primitive(op: str, package: str, name: str) -> Any:
    """The generated Ascend primitive ``<name>_op`` of ``ascend_ops.<op>._ms_graph``.

    RuntimeError naming the op, the package and why when this build has none (the reason CMake
    recorded in ``_build_info.NOT_BUILT_WHY``, also shown by ``ascend-ops list``).
    """
    info = _build_info(op)
    if not info.FRAMEWORKS.get("mindspore_ascend"):
        why = info.NOT_BUILT_WHY.get("mindspore_ascend") or "it was not built"
        raise RuntimeError(f"{op}: MindSpore's device_target is 'Ascend', but this build of {package} has no "
                           f"MindSpore Ascend kernel: {why}")
    module = importlib.import_module(f"ascend_ops.{op}._ms_graph")
    return getattr(module, f"{name}_op")
