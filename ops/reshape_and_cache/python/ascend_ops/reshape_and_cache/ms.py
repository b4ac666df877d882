"""MindSpore front door of reshape_and_cache: PyNative, ``ms.jit`` and GRAPH_MODE Cells.

One primitive object, :data:`PRIMITIVE` (a :class:`ReshapeAndCache`), serves every mode and
updates ``key_cache`` / ``value_cache`` (Tensors or Parameters) in place, without copying them;
:func:`reshape_and_cache` just calls it, so it too works in every mode.

- PyNative (an eager call): :meth:`ReshapeAndCache.__call__` goes to the native PyNative entry
  ``_ms.reshape_and_cache``. It checks every argument on the calling thread, so a bad call
  raises ``TypeError`` / ``ValueError`` / ``IndexError`` right there with the caches untouched,
  then queues the CPU kernel in program order with MindSpore's own ops. Checking the slots
  means waiting for the ops issued before the call (one of them may produce slot_mapping).
- Graph mode (``ms.jit``, GRAPH_MODE): the object is an ``ops.Custom`` aot primitive whose
  kernel is ``aop_reshape_and_cache_aot`` in the same ``_ms`` library. The caches are marked
  ``RW_WRITE`` and the primitive has ``side_effect_mem=True`` (without it MindSpore drops the
  write). Dtypes and shapes are checked when the graph is compiled, with the PyNative
  exception classes and messages. What only the data can tell (a slot >= num_blocks *
  block_size) is found by the kernel when the graph runs: it writes nothing and MindSpore
  raises ``RuntimeError`` whose message ends with ours ("... Error message is IndexError:
  reshape_and_cache: slot_mapping[t] = s is out of range ..."): not an ``IndexError``. A graph
  gets one int32 ``[1]`` output (0) to ignore; PyNative returns ``None``.

Call :func:`reshape_and_cache` or :data:`PRIMITIVE` inside graphs, not the package-level
``ascend_ops.reshape_and_cache.reshape_and_cache`` (its framework dispatch is Python that graph
compilers reject).

Only ``device_target="CPU"`` is built here: elsewhere the op raises ``RuntimeError`` (the NPU
backend needs CANN at build time) instead of handing device memory to the CPU kernel.

Import ``mindspore`` before this module (numpy must be < 2 beside mindspore 2.10).
"""
from __future__ import annotations

from typing import Any

import mindspore as ms
from mindspore import ops
from mindspore.graph.jit_context import jit_context
from mindspore.ops import signature as sig

from ascend_ops.common.loader import load_native

__all__ = ["PRIMITIVE", "ReshapeAndCache", "reshape_and_cache"]

_OP = "reshape_and_cache"
_native = load_native("ascend_ops.reshape_and_cache", "mindspore")


def _dtype_name(dtype: Any) -> str:
    """``Tensor[Float16]`` / ``Float16`` -> ``"float16"``: the names the aot kernel gets."""
    element = dtype.element_type() if hasattr(dtype, "element_type") else dtype
    return str(element).lower()


class ReshapeAndCache(ops.Custom):
    """Write key/value rows into a paged KV cache, in place.

    ``key_cache[s // block_size, s % block_size] = key[t]`` and the same for value, for every
    ``t < T'`` with ``s = slot_mapping[t] >= 0``; ``s < 0`` is padding.

    Inputs
    ------
    key : [T, H, Dk] float16, bfloat16, float32 or int8 (PyNative: token rows may be strided).
    value : [T, H, Dv], the dtype of key.
    key_cache : [num_blocks, block_size, H, Dk], contiguous; written in place.
    value_cache : [num_blocks, block_size, H, Dv], contiguous; written in place.
    slot_mapping : [T'] int32 or int64, T' <= T.

    Outputs
    -------
    PyNative: None. Graph mode: an int32 [1] tensor holding 0 (ignore it).
    """

    __mindspore_signature__ = (
        sig.make_sig("key"),
        sig.make_sig("value"),
        sig.make_sig("key_cache", sig.sig_rw.RW_WRITE),
        sig.make_sig("value_cache", sig.sig_rw.RW_WRITE),
        sig.make_sig("slot_mapping"),
    )

    def __init__(self) -> None:
        super().__init__(
            func=f"{_native.__file__}:{_native.AOT_SYMBOL}",
            out_shape=lambda *shapes: (1,),
            out_dtype=lambda *dtypes: ms.int32,
            func_type="aot",
        )
        self.add_prim_attr("side_effect_mem", True)

    def __infer__(self, *args: dict) -> dict:
        # Graph compilation: refuse a device this build has no kernel for, then the host's
        # checks on the inferred shapes and dtypes.
        target = ms.get_context("device_target")
        if target != "CPU":
            raise RuntimeError(
                f"{_OP}: MindSpore's device_target is {target!r}, but this build of "
                "ascend-op-reshape-and-cache has no NPU backend for MindSpore: it runs on "
                "device_target 'CPU' only (rebuild where CANN is installed)"
            )
        _native.validate_signature([list(a["shape"]) for a in args], [_dtype_name(a["dtype"]) for a in args])
        return super().__infer__(*args)

    def __call__(self, key, value, key_cache, value_cache, slot_mapping):
        if jit_context() is not None:  # traced jit: let MindSpore record the aot primitive
            return super().__call__(key, value, key_cache, value_cache, slot_mapping)
        return _native.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping)


#: The shared instance: graph compilers resolve it as a module-level primitive.
PRIMITIVE = ReshapeAndCache()


def reshape_and_cache(key, value, key_cache, value_cache, slot_mapping):
    """Write key/value rows into a paged KV cache in place (MindSpore tensors or Parameters).

    Works eagerly (PyNative), inside ``ms.jit`` functions and in GRAPH_MODE Cells.

    Parameters
    ----------
    key : mindspore.Tensor, [T, H, Dk] float16, bfloat16, float32 or int8; in PyNative token
        rows may be strided (e.g. a view of a fused qkv tensor).
    value : mindspore.Tensor, [T, H, Dv], the dtype of key.
    key_cache : mindspore.Tensor or Parameter, [num_blocks, block_size, H, Dk], contiguous.
    value_cache : mindspore.Tensor or Parameter, [num_blocks, block_size, H, Dv], contiguous.
    slot_mapping : mindspore.Tensor, [T'] int32 or int64 with T' <= T.

    For ``t < T'`` and ``s = slot_mapping[t] >= 0``:
    ``key_cache[s // block_size, s % block_size] = key[t]`` and the same for value.

    Returns
    -------
    None in PyNative; in a graph an int32 [1] tensor holding 0 (ignore it).

    Raises
    ------
    TypeError, ValueError, IndexError
        Naming the argument, the expected and the actual value; the caches are then unchanged.
        In a graph, dtype and shape errors are raised when it is compiled; a slot out of range
        is found when it runs and raised by MindSpore as ``RuntimeError`` whose message carries
        ours ("... Error message is IndexError: reshape_and_cache: slot_mapping[t] = ...").
    RuntimeError
        On a device_target this build has no backend for.
    """
    return PRIMITIVE(key, value, key_cache, value_cache, slot_mapping)
