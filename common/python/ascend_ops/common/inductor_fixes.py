"""A missing Inductor lowering that makes torch.compile drop KV-cache writes.

torch 2.13, ``torch.compile(dynamic=True)`` with Inductor: a mutating custom op (ours, or any
``torch.library.custom_op`` with ``mutates_args``) whose mutated argument is a view of a graph
input taken inside the compiled region (``kv[1]``, ``kv.unbind(0)[1]``) goes through
``auto_functionalized_v2``, which regenerates the view as
``as_strided(base, size, stride, sym_storage_offset(select(base, 0, 1)))``. The offset is a
SymInt, so the graph computes it with ``aten.sym_storage_offset``. Inductor has lowerings for
``sym_size`` and ``sym_stride`` but none for ``sym_storage_offset``: it falls back to running
the op on a fake tensor rebuilt from the IR node (``ir_node_to_tensor``), which does not carry
the view's storage offset. The offset comes out as 0, every such view aliases the start of the
base (``kv[1]`` becomes ``kv[0]``), and the op writes the wrong tensor with no error.

:func:`install` adds the lowering torch is missing, written exactly as torch's own ``sym_size``
and ``sym_stride`` lowerings: the value is the node's traced SymInt (or int). It changes no
config and touches no other op; it is only added if Inductor has no lowering for the op (a
torch that fixes this keeps its own). It is registered when ``torch._inductor.lowering`` is
first imported, so importing an op does not import Inductor.
"""
from __future__ import annotations

from .import_hooks import when_imported

__all__ = ["install", "installed"]

_LOWERING_MODULE = "torch._inductor.lowering"
_installed = False


def install() -> None:
    """Register the ``aten.sym_storage_offset`` lowering once Inductor is imported (idempotent)."""
    when_imported(_LOWERING_MODULE, _register)


def installed() -> bool:
    """Tell whether this module registered the lowering (False where torch has its own, or
    before Inductor is imported)."""
    return _installed


def _register(lowering) -> None:
    global _installed
    import torch
    from torch._inductor.virtualized import V

    op = torch.ops.aten.sym_storage_offset.default
    if op in lowering.lowerings:
        return

    @lowering.register_lowering(op)
    def sym_storage_offset(a):
        val = V.graph.current_node.meta["val"]
        if isinstance(val, torch.SymInt):
            return val.node.expr
        return int(val)

    _installed = True
