"""MindSpore front door of adv_step_flash: PyNative, ``ms.jit`` and GRAPH_MODE Cells.

One primitive object, :data:`PRIMITIVE` (an :class:`AdvanceStepFlashattn`), serves every mode
and updates ``input_tokens``, ``input_positions``, ``seq_lens`` and ``slot_mapping`` (Tensors
or Parameters) in place, without copying them; :func:`advance_step_flashattn` just calls it,
so it too works in every mode.

- PyNative (an eager call): :meth:`AdvanceStepFlashattn.__call__` goes to the native PyNative
  entry ``_ms.advance_step_flashattn``. It checks the ints, shapes and dtypes on the calling
  thread (``TypeError`` / ``ValueError`` right there, outputs untouched), then queues the CPU
  kernel in program order with MindSpore's ops, without waiting for them. The values the step
  reads are checked in the queued task: bad data writes nothing and raises its ``ValueError`` /
  ``IndexError`` once, at MindSpore's next synchronisation (``asnumpy()``, ``print``) or at
  ``ascend_ops.common.check_errors()``, whichever comes first.
- Graph mode (``ms.jit``, GRAPH_MODE): the object is an ``ops.Custom`` aot primitive whose
  kernel is ``aop_adv_step_flash_aot`` in the same ``_ms`` library. The four outputs are marked
  ``RW_WRITE`` and the primitive has ``side_effect_mem=True`` (without it MindSpore drops the
  writes). The three ints are scalar inputs of the primitive (compile-time constants when they are
  Python ints). Dtypes and shapes are checked when the graph is
  compiled, with the PyNative exception classes and messages. What only the data can tell (a
  block index beyond the table, a negative id, an overflow) and the ints themselves are checked
  by the kernel when the graph runs: it writes nothing and MindSpore raises ``RuntimeError``
  whose message ends with ours ("... Error message is IndexError: advance_step_flashattn:
  block index ..."). A graph gets one int32 ``[1]`` output (0) to ignore; PyNative returns
  ``None``.

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

__all__ = ["adv_step_flash_npu", "PRIMITIVE", "AdvanceStepFlashattn", "advance_step_flashattn"]

_OP = "advance_step_flashattn"
_native = load_native("ascend_ops.adv_step_flash", "mindspore")


def _dtype_name(dtype: Any) -> str:
    """``Tensor[Int32]`` / ``Int64`` -> ``"int32"`` / ``"int64"``: the names the aot kernel gets."""
    element = dtype.element_type() if hasattr(dtype, "element_type") else dtype
    return str(element).lower()


class AdvanceStepFlashattn(ops.Custom):
    """Advance a multi-step decode batch's metadata by one step, in place.

    For ``i < num_queries`` with ``pos = seq_lens[i]``: ``input_tokens[i] = sampled_token_ids[i]``,
    ``input_positions[i] = pos``, ``seq_lens[i] = pos + 1``,
    ``slot_mapping[i] = block_tables[i, pos // block_size] * block_size + pos % block_size``;
    for ``num_queries <= i < num_seqs``: token 0, position 0, slot -1, seq_lens unchanged.

    Inputs
    ------
    num_seqs, num_queries, block_size : int
    input_tokens, input_positions, seq_lens, slot_mapping : [num_seqs] int32 / int64, contiguous; written.
    sampled_token_ids : [num_queries, 1] or [num_queries] int32 / int64.
    block_tables : [num_seqs, max_blocks_per_seq] int32 / int64 (PyNative: rows may be strided).

    Outputs
    -------
    PyNative: None. Graph mode: an int32 [1] tensor holding 0 (ignore it).
    """

    __mindspore_signature__ = (
        sig.make_sig("num_seqs"),
        sig.make_sig("num_queries"),
        sig.make_sig("block_size"),
        sig.make_sig("input_tokens", sig.sig_rw.RW_WRITE),
        sig.make_sig("sampled_token_ids"),
        sig.make_sig("input_positions", sig.sig_rw.RW_WRITE),
        sig.make_sig("seq_lens", sig.sig_rw.RW_WRITE),
        sig.make_sig("slot_mapping", sig.sig_rw.RW_WRITE),
        sig.make_sig("block_tables"),
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
        target = ms.get_context("device_target")
        if target != "CPU":
            raise RuntimeError(
                f"{_OP}: MindSpore's device_target is {target!r}, but this build of "
                "ascend-op-adv-step-flash has no NPU backend for MindSpore: it runs on "
                "device_target 'CPU' only (rebuild where CANN is installed)"
            )
        ints, tensors = args[:3], args[3:]
        # the ints are compile-time constants in most graphs; an unknown one is checked at run time
        values = [a.get("value") if isinstance(a.get("value"), int) else None for a in ints]
        shapes = [list(a["shape"]) for a in tensors]
        if values[0] is None:
            values[0] = shapes[0][0] if len(shapes[0]) == 1 else 0
        if values[1] is None:
            values[1] = shapes[1][0] if shapes[1] else 0
        if values[2] is None:
            values[2] = 1
        _native.validate_signature(values, shapes, [_dtype_name(a["dtype"]) for a in tensors])
        return super().__infer__(*args)

    def __call__(self, num_seqs, num_queries, block_size, input_tokens, sampled_token_ids, input_positions,
                 seq_lens, slot_mapping, block_tables):
        args = (num_seqs, num_queries, block_size, input_tokens, sampled_token_ids, input_positions, seq_lens,
                slot_mapping, block_tables)
        if jit_context() is not None:  # traced jit: let MindSpore record the aot primitive
            return super().__call__(*args)
        return _native.advance_step_flashattn(*args)


#: The shared instance: graph compilers resolve it as a module-level primitive.
PRIMITIVE = AdvanceStepFlashattn()


def advance_step_flashattn(num_seqs, num_queries, block_size, input_tokens, sampled_token_ids, input_positions,
                           seq_lens, slot_mapping, block_tables):
    """Advance the decode metadata by one step in place (MindSpore tensors or Parameters).

    Works eagerly (PyNative), inside ``ms.jit`` functions and in GRAPH_MODE Cells.

    Parameters
    ----------
    num_seqs, num_queries, block_size : int
        ``0 < num_queries <= num_seqs``, ``block_size > 0``.
    input_tokens : mindspore.Tensor or Parameter, [num_seqs] int64 / int32, contiguous; written.
    sampled_token_ids : mindspore.Tensor, [num_queries, 1] or [num_queries] int64 / int32.
    input_positions : mindspore.Tensor or Parameter, [num_seqs] int64 / int32, contiguous; written.
    seq_lens : mindspore.Tensor or Parameter, [num_seqs] int32 / int64, contiguous; read and written.
    slot_mapping : mindspore.Tensor or Parameter, [num_seqs] int64 / int32, contiguous; written.
    block_tables : mindspore.Tensor, [num_seqs, max_blocks_per_seq] int32 / int64.

    For ``i < num_queries`` with ``pos = seq_lens[i]``: ``input_tokens[i] = sampled_token_ids[i]``,
    ``input_positions[i] = pos``, ``seq_lens[i] = pos + 1``,
    ``slot_mapping[i] = block_tables[i, pos // block_size] * block_size + pos % block_size``;
    padding rows ``num_queries <= i < num_seqs`` get token 0, position 0, slot -1.

    Returns
    -------
    None in PyNative; in a graph an int32 [1] tensor holding 0 (ignore it).

    Raises
    ------
    TypeError, ValueError, IndexError
        Naming the argument, the expected and the actual value; the outputs are then
        unchanged. In PyNative, errors in the data are raised at MindSpore's next
        synchronisation or ``check_errors()``, not by the call. In a graph, dtype and shape errors are raised when it is compiled; errors
        in the data or the ints are found when it runs and raised by MindSpore as
        ``RuntimeError`` whose message carries ours.
    RuntimeError
        On a device_target this build has no backend for.
    """
    # On Ascend the generated primitive (mindspore/ascend/adv_step_flash_op.yaml), chosen when a
    # graph is compiled; RuntimeError naming the op and why where it was not built.
    primitive = npu_primitive("adv_step_flash", "ascend-op-adv-step-flash", "adv_step_flash_npu") if on_ascend() \
        else PRIMITIVE
    return primitive(num_seqs, num_queries, block_size, input_tokens, sampled_token_ids, input_positions, seq_lens,
                     slot_mapping, block_tables)


def adv_step_flash_npu(num_seqs, num_queries, block_size, input_tokens, sampled_token_ids, input_positions,
                       seq_lens, slot_mapping, block_tables):
    """The eager function of the generated Ascend primitive (``_ms_graph.py`` imports it): the
    PyNative entry, which runs the AscendC kernel on MindSpore's stream (not run on NPU)."""
    return _native.advance_step_flashattn(num_seqs, num_queries, block_size, input_tokens, sampled_token_ids,
                                          input_positions, seq_lens, slot_mapping, block_tables)
