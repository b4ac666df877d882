"""MindSpore front door of lightning_indexer: PyNative, ``ms.jit`` and GRAPH_MODE Cells.

:func:`lightning_indexer` works in every mode. It calls :data:`PRIMITIVE` (a
:class:`LightningIndexer`) with the arguments in the primitive's form (below).

- PyNative (an eager call): :meth:`LightningIndexer.__call__` goes to the native PyNative entry
  ``_ms.lightning_indexer``. It checks shapes, dtypes and layouts on the calling thread
  (``TypeError`` / ``ValueError`` right there), then allocates the outputs and queues the CPU
  kernel in program order with MindSpore's own ops, without waiting for them. The lengths and
  block ids are checked in the queued task: bad data writes nothing and raises its
  ``ValueError`` / ``IndexError`` once, at MindSpore's next synchronisation (``asnumpy()``,
  ``print``) or at ``ascend_ops.common.check_errors()``, whichever comes first.
- Graph mode (``ms.jit``, GRAPH_MODE): the object is an ``ops.Custom`` aot primitive whose
  kernel is ``aop_lightning_indexer_aot`` in the same ``_ms`` library. Its output shapes come
  from the host's ``output_shape()`` when the graph is compiled, after the host's
  ``validate()`` on the inferred shapes and dtypes: a bad layout, dtype, rank or shape raises the
  PyNative exception and message at compile time. What only the data can tell (a length beyond
  the key tensor, a block id out of range) is found by the kernel when the graph runs: it writes
  nothing and MindSpore raises ``RuntimeError`` whose message ends with ours ("... Error message
  is IndexError: lightning_indexer: block_table[0][0] = 99 is out of range ...").

The primitive's form (what a graph records), used by :func:`lightning_indexer`::

    PRIMITIVE(query, key, weights, actual_seq_lengths_query, actual_seq_lengths_key, block_table,
              layout_query, layout_key, sparse_count, sparse_mode, present, return_value)
        -> (sparse_indices, sparse_values)

- ``layout_query`` / ``layout_key`` are ints, :data:`LAYOUT_CODES` (``{"BSND": 0, "TND": 1,
  "PA_BSND": 2}``); :func:`lightning_indexer` converts the names.
- Optional tensors: a graph input cannot be None, so an absent tensor is passed as the
  placeholder :data:`ABSENT` (an int32 ``[1]`` tensor, never read) and ``present`` says which
  are real: bit 0 ``actual_seq_lengths_query``, bit 1 ``actual_seq_lengths_key``, bit 2
  ``block_table``. :func:`lightning_indexer` does this for None arguments.
- ``sparse_values`` is float32 of the indices' shape when ``return_value`` is true; otherwise it
  is a float32 ``[0]`` tensor in a graph (None in an eager call), which :func:`lightning_indexer`
  replaces by None.

The ints (layout codes, sparse_count, sparse_mode, present, return_value) are scalar inputs of
the primitive: compile-time constants when they are Python constants of the graph.

Device targets (CPU always, Ascend only where built): see ``ascend_ops.common.ms_graph``.

Import ``mindspore`` before this module (numpy must be < 2 beside mindspore 2.10).
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

import mindspore as ms
from mindspore import ops
from mindspore.graph.jit_context import jit_context

from ascend_ops.common.loader import load_native
from ascend_ops.common.ms_graph import npu_primitive, on_ascend

__all__ = ["lightning_indexer_npu", "ABSENT", "LAYOUT_CODES", "PRIMITIVE", "LightningIndexer", "lightning_indexer"]

_OP = "lightning_indexer"
_native = load_native("ascend_ops.lightning_indexer", "mindspore")

#: Layout name -> the code the primitive takes (the host's Layout enum).
LAYOUT_CODES = {"BSND": 0, "TND": 1, "PA_BSND": 2}
_NAMES = {code: name for name, code in LAYOUT_CODES.items()}
#: The graph placeholder of an absent optional tensor (never read: its ``present`` bit is 0).
ABSENT = ms.Tensor(np.zeros((1,), np.int32))


def _dtype_name(dtype: Any) -> str:
    """``Tensor[Float16]`` / ``Float16`` -> ``"float16"``: the names the aot kernel gets."""
    element = dtype.element_type() if hasattr(dtype, "element_type") else dtype
    return str(element).lower()


def _constant(arg: dict, name: str) -> Optional[int]:
    value = arg.get("value")
    if isinstance(value, (bool, int, np.integer)):
        return int(value)
    return None


class LightningIndexer(ops.Custom):
    """The lightning_indexer primitive (see the module docstring for its form).

    Inputs
    ------
    query : [B, S1, N1, D] (BSND) or [T1, N1, D] (TND); float16, bfloat16 or float32.
    key : [num_blocks, block_size, N2, D] (PA_BSND), [B, S2, N2, D] (BSND) or [T2, N2, D] (TND).
    weights : [B, S1, N1] or [T1, N1]; the dtype of query or float32.
    actual_seq_lengths_query, actual_seq_lengths_key : [B] int32 / int64, or :data:`ABSENT`.
    block_table : [B, max_blocks] int32 / int64, or :data:`ABSENT`.
    layout_query, layout_key : int, :data:`LAYOUT_CODES`.
    sparse_count, sparse_mode : int.
    present : int, bit 0 / 1 / 2 set where actual_seq_lengths_query / actual_seq_lengths_key /
        block_table is real.
    return_value : bool.

    Outputs
    -------
    (sparse_indices int32 [B, S1, N2, K] or [T1, N2, K], sparse_values float32 of the same
    shape; unless return_value, float32 [0] in a graph and None in an eager call).
    """

    def __init__(self) -> None:
        super().__init__(
            func=f"{_native.__file__}:{_native.AOT_SYMBOL}",
            out_shape=lambda *shapes: ((1,), (1,)),
            out_dtype=lambda *dtypes: (ms.int32, ms.float32),
            func_type="aot",
        )

    def __infer__(self, *args: dict) -> dict:
        # Graph compilation: refuse a device this build has no kernel for, then the host's
        # checks on the inferred shapes and dtypes, which also give the output shape.
        target = ms.get_context("device_target")
        if target != "CPU":
            raise RuntimeError(
                f"{_OP}: MindSpore's device_target is {target!r}, but this build of "
                "ascend-op-lightning-indexer has no NPU backend for MindSpore: it runs on "
                "device_target 'CPU' only (rebuild where CANN is installed)"
            )
        if len(args) != 12:
            raise TypeError(f"{_OP}: the primitive takes 12 inputs (see ascend_ops.lightning_indexer.ms), "
                            f"got {len(args)}")
        tensors, scalars = args[:6], args[6:]
        names = ("layout_query", "layout_key", "sparse_count", "sparse_mode", "present", "return_value")
        values = {name: _constant(a, name) for name, a in zip(names, scalars)}
        unknown = [name for name, v in values.items() if v is None]
        if unknown:
            raise TypeError(f"{_OP}: {', '.join(unknown)} should be constants of the graph (Python ints)")
        shape = _native.output_shape(
            [list(a["shape"]) for a in tensors], [_dtype_name(a["dtype"]) for a in tensors],
            values["layout_query"], values["layout_key"], values["sparse_count"], values["sparse_mode"],
            values["present"])
        if not shape:  # a dynamic input shape: the rank is all that is known
            rank = 3 if values["layout_query"] == LAYOUT_CODES["TND"] else 4
            shape = [-1] * (rank - 1) + [values["sparse_count"]]
        value_shape = list(shape) if values["return_value"] else [0]
        return {"shape": (tuple(shape), tuple(value_shape)), "dtype": (ms.int32, ms.float32), "value": None}

    def __call__(self, query, key, weights, actual_seq_lengths_query, actual_seq_lengths_key, block_table,
                 layout_query, layout_key, sparse_count, sparse_mode, present, return_value):
        args = (query, key, weights, actual_seq_lengths_query, actual_seq_lengths_key, block_table, layout_query,
                layout_key, sparse_count, sparse_mode, present, return_value)
        if jit_context() is not None:  # traced jit: let MindSpore record the aot primitive
            return super().__call__(*args)
        optional = [t if present & (1 << i) else None
                    for i, t in enumerate((actual_seq_lengths_query, actual_seq_lengths_key, block_table))]
        return _native.lightning_indexer(
            query, key, weights, *optional, layout_query=_NAMES.get(layout_query, str(layout_query)),
            layout_key=_NAMES.get(layout_key, str(layout_key)), sparse_count=sparse_count,
            sparse_mode=sparse_mode, return_value=bool(return_value))


#: The shared instance: graph compilers resolve it as a module-level primitive.
PRIMITIVE = LightningIndexer()


def lightning_indexer(query, key, weights, actual_seq_lengths_query=None, actual_seq_lengths_key=None,
                      block_table=None, layout_query: str = "BSND", layout_key: str = "PA_BSND",
                      sparse_count: int = 2048, sparse_mode: int = 3,
                      return_value: bool = False) -> Tuple[Any, Optional[Any]]:
    """Indices of the top ``sparse_count`` visible keys of every query row (MindSpore tensors).

    Works eagerly (PyNative), inside ``ms.jit`` functions and in GRAPH_MODE Cells; in a graph the
    layouts, sparse_count, sparse_mode and return_value must be constants and the optional
    tensors either tensors or None.

    Parameters
    ----------
    See :func:`ascend_ops.lightning_indexer.lightning_indexer` (same names, same shapes).

    Returns
    -------
    (sparse_indices, sparse_values)
        int32 [B, S1, N2, K] or [T1, N2, K]; float32 scores of the same shape, or None unless
        return_value.

    Raises
    ------
    TypeError, ValueError, IndexError
        Naming the argument, the expected and the actual value. In PyNative, errors in the
        lengths or the block table are raised at MindSpore's next synchronisation or
        ``check_errors()``, not by the call. In a graph, layout, dtype and
        shape errors are raised when it is compiled; errors in the lengths or the block table
        when it runs, as ``RuntimeError`` whose message carries ours.
    RuntimeError
        On a device_target this build has no backend for.
    """
    # The same code in every mode: in a graph the None checks and the layout codes are resolved
    # when it is compiled, and PRIMITIVE is recorded as the aot op; an eager call of PRIMITIVE
    # goes to the PyNative entry.
    present = 0
    if actual_seq_lengths_query is None:
        actual_seq_lengths_query = ABSENT
    else:
        present = present + 1
    if actual_seq_lengths_key is None:
        actual_seq_lengths_key = ABSENT
    else:
        present = present + 2
    if block_table is None:
        block_table = ABSENT
    else:
        present = present + 4
    # On Ascend the generated primitive (mindspore/ascend/lightning_indexer_op.yaml, the same
    # inputs), chosen when a graph is compiled; RuntimeError naming the op and why where it was
    # not built.
    primitive = npu_primitive(_OP, "ascend-op-lightning-indexer", "lightning_indexer_npu") if on_ascend() \
        else PRIMITIVE
    indices, values = primitive(query, key, weights, actual_seq_lengths_query, actual_seq_lengths_key, block_table,
                                _layout_code(layout_query, "layout_query", False),
                                _layout_code(layout_key, "layout_key", True), sparse_count, sparse_mode, present,
                                return_value)
    if return_value:
        return indices, values
    return indices, None


def _layout_code(name: str, arg: str, is_key: bool) -> int:
    """The primitive's code of a layout name; an unknown name goes to the host's parser for its
    ValueError. Plain comparisons, so a graph resolves them when it is compiled."""
    if name == "BSND":
        return 0
    if name == "TND":
        return 1
    if is_key and name == "PA_BSND":
        return 2
    return _native.layout_code(name, arg, is_key)


def lightning_indexer_npu(query, key, weights, actual_seq_lengths_query, actual_seq_lengths_key, block_table,
                          layout_query, layout_key, sparse_count, sparse_mode, present, return_value):
    """The eager function of the generated Ascend primitive (``_ms_graph.py`` imports it): the
    PyNative entry (the AscendC kernel on MindSpore's stream, not run on NPU); the primitive's
    inputs. Returns (sparse_indices, sparse_values or None)."""
    return PRIMITIVE(query, key, weights, actual_seq_lengths_query, actual_seq_lengths_key, block_table,
                     layout_query, layout_key, sparse_count, sparse_mode, present, return_value)
