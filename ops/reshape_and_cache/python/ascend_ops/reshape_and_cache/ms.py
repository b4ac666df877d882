"""MindSpore front door of reshape_and_cache: PyNative, ``ms.jit`` and GRAPH_MODE Cells.

One primitive object, :data:`PRIMITIVE` (a :class:`ReshapeAndCache`), serves every mode and
updates ``key_cache`` / ``value_cache`` (Tensors or Parameters) in place, without copying them;
:func:`reshape_and_cache` just calls it, so it too works in every mode.

- PyNative (an eager call): :meth:`ReshapeAndCache.__call__` goes to the native PyNative entry
  ``_ms.reshape_and_cache``. It checks shapes, dtypes and layouts on the calling thread (a bad
  call raises ``TypeError`` / ``ValueError`` right there, caches untouched), then queues the
  CPU kernel in program order with MindSpore's own ops, without waiting for them. The slot
  values are checked in the queued task, once the ops before the call have produced them: a
  slot out of range writes nothing and raises ``IndexError`` (same message) once, at
  MindSpore's next synchronisation (``asnumpy()``, ``print``) or at
  ``ascend_ops.common.check_errors()``, whichever comes first. MindSpore 2.10 on CPU does not
  raise it at the next op call nor at ``ms.runtime.synchronize()``.
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

Device targets (CPU always, Ascend only where built): see ``ascend_ops.common.ms_graph``.

Import ``mindspore`` before this module (numpy must be < 2 beside mindspore 2.10).
"""
from __future__ import annotations

from typing import Any

import mindspore as ms
from mindspore import ops
from mindspore.graph.jit_context import jit_context
from mindspore.ops import signature as sig

from ascend_ops.common.loader import load_native
from ascend_ops.common.ms_graph import npu_primitive, on_ascend
from mindspore.ops.primitive import constexpr

__all__ = ["reshape_and_cache_npu", "PRIMITIVE", "KV_PRIMITIVE", "KEY_PRIMITIVE", "ReshapeAndCache", "ReshapeAndCacheAttrs",
           "ReshapeAndCacheKey", "reshape_and_cache"]

_OP = "reshape_and_cache"
_PACKAGE = "ascend-op-reshape-and-cache"
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
        shapes = [list(a["shape"]) for a in args]
        dtypes = [_dtype_name(a["dtype"]) for a in args]
        attrs = [0, 0]
        if self._has_attrs:
            attrs = _constant_attrs(args[-1])
            if attrs is None:  # not a compile-time constant: the aot kernel checks at run time
                return super().__infer__(*args)
        _native.validate_signature(shapes, dtypes, attrs[0], attrs[1])
        return super().__infer__(*args)

    _has_attrs = False

    def __call__(self, key, value, key_cache, value_cache, slot_mapping):
        if jit_context() is not None:  # traced jit: let MindSpore record the aot primitive
            return super().__call__(key, value, key_cache, value_cache, slot_mapping)
        return _native.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping)


class ReshapeAndCacheAttrs(ReshapeAndCache):
    """:class:`ReshapeAndCache` with a sixth input, ``attrs``: an int64 [2] tensor
    ``(cache_mode, head_num)`` (head_num 0: not given). Built by :func:`reshape_and_cache`."""

    __mindspore_signature__ = ReshapeAndCache.__mindspore_signature__ + (sig.make_sig("attrs"),)
    _has_attrs = True

    def __call__(self, key, value, key_cache, value_cache, slot_mapping, attrs):
        if jit_context() is not None:
            return ops.Custom.__call__(self, key, value, key_cache, value_cache, slot_mapping, attrs)
        cache_mode, head_num = (int(x) for x in attrs.asnumpy())
        return _native.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, cache_mode, head_num)


class ReshapeAndCacheKey(ReshapeAndCache):
    """The key-only form: inputs ``(key, key_cache, slot_mapping, attrs)``, key_cache written in
    place; attrs as in :class:`ReshapeAndCacheAttrs`."""

    __mindspore_signature__ = (
        sig.make_sig("key"),
        sig.make_sig("key_cache", sig.sig_rw.RW_WRITE),
        sig.make_sig("slot_mapping"),
        sig.make_sig("attrs"),
    )
    _has_attrs = True

    def __call__(self, key, key_cache, slot_mapping, attrs):
        if jit_context() is not None:
            return ops.Custom.__call__(self, key, key_cache, slot_mapping, attrs)
        cache_mode, head_num = (int(x) for x in attrs.asnumpy())
        return _native.reshape_and_cache(key, None, key_cache, None, slot_mapping, cache_mode, head_num)


def _constant_attrs(arg: dict):
    """(cache_mode, head_num) from the inferred attrs input if it is a compile-time constant."""
    value = arg.get("value") if isinstance(arg, dict) else None
    if value is None:
        return None
    try:
        array = value.asnumpy() if hasattr(value, "asnumpy") else value
        return [int(x) for x in list(array)]
    except (TypeError, ValueError):
        return None


#: The shared instances: graph compilers resolve them as module-level primitives.
PRIMITIVE = ReshapeAndCache()  # key + value, ND, [T, H, D] (the original five-input form)
KV_PRIMITIVE = ReshapeAndCacheAttrs()  # key + value with (cache_mode, head_num)
KEY_PRIMITIVE = ReshapeAndCacheKey()  # key-only with (cache_mode, head_num)


def reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, cache_mode=0, head_num=None):
    """Write key (and value) rows into a paged KV cache in place (MindSpore tensors or Parameters).

    Works eagerly (PyNative), inside ``ms.jit`` functions and in GRAPH_MODE Cells.

    Parameters
    ----------
    key : mindspore.Tensor, [T, H, Dk] (or [T, H*Dk] with head_num) float16, bfloat16, float32 or
        int8; in PyNative token rows may be strided (e.g. a view of a fused qkv tensor).
    value : mindspore.Tensor [T, H, Dv] (or [T, H*Dv]), the dtype of key; or None (key-only).
    key_cache : mindspore.Tensor or Parameter, contiguous. cache_mode 0:
        [num_blocks, block_size, H, Dk]; cache_mode 1 (FRACTAL_NZ): [num_blocks, H*Dk/F, block_size, F],
        F = 16 (float16 / bfloat16) or 32 (int8).
    value_cache : the same with Dv, or None exactly when value is None.
    slot_mapping : mindspore.Tensor, [T'] int32 or int64 with T' <= T.
    cache_mode : 0 (ND) or 1 (NZ).
    head_num : H when key / value are [T, H*D] (must divide H*D); None otherwise.

    For ``t < T'`` and ``s = slot_mapping[t] >= 0``, ``b = s // block_size``, ``o = s % block_size``:
    ND ``key_cache[b, o] = key[t]``; NZ ``key_cache[b, j // F, o, j % F] = key[t].flatten()[j]``;
    the same for value.

    Returns
    -------
    None in PyNative; in a graph an int32 [1] tensor holding 0 (ignore it).

    Raises
    ------
    TypeError, ValueError, IndexError
        Naming the argument, the expected and the actual value; the caches are then unchanged.
        In PyNative, a slot out of range is raised (``IndexError``) at MindSpore's next
        synchronisation or ``check_errors()``, not by the call. In a graph, dtype and shape errors are raised when it is compiled (for the forms with
        cache_mode / head_num, when those are compile-time constants); a slot out of range
        is found when it runs and raised by MindSpore as ``RuntimeError`` whose message carries
        ours ("... Error message is IndexError: reshape_and_cache: slot_mapping[t] = ...").
    RuntimeError
        On a device_target this build has no backend for.
    """
    if on_ascend():
        return _ascend_primitive(value is None and value_cache is None)(
            key, value, key_cache, value_cache, slot_mapping, cache_mode, 0 if head_num is None else head_num)
    if value is None and value_cache is None:
        return KEY_PRIMITIVE(key, key_cache, slot_mapping, _attrs(cache_mode, head_num))
    if cache_mode == 0 and head_num is None:
        return PRIMITIVE(key, value, key_cache, value_cache, slot_mapping)
    return KV_PRIMITIVE(key, value, key_cache, value_cache, slot_mapping, _attrs(cache_mode, head_num))


def _attrs(cache_mode, head_num):
    """The attrs input (cache_mode, head_num); head_num None is sent as 0 (not given)."""
    return ms.Tensor([cache_mode, 0 if head_num is None else head_num], ms.int64)


@constexpr
def _ascend_primitive(key_only: bool):
    """The Ascend graph primitive (mindspore/ascend/reshape_and_cache_op.yaml), chosen when a
    graph is compiled; RuntimeError naming the op and why where it was not built."""
    if key_only:
        raise RuntimeError(f"{_OP}: the key-only form (value and value_cache None) has no MindSpore Ascend "
                           "kernel yet: pass value and value_cache")
    return npu_primitive(_OP, _PACKAGE, "reshape_and_cache_npu")


def reshape_and_cache_npu(key, value, key_cache, value_cache, slot_mapping, cache_mode=0, head_num=0):
    """The eager function of the generated Ascend primitive (``_ms_graph.py`` imports it): the
    PyNative entry, which runs the AscendC kernel on MindSpore's stream (not run on NPU)."""
    return _native.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, cache_mode, head_num)
