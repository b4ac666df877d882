"""Build-time generator: an op's Python front doors and MindSpore Ascend op yaml from its description.

``ascend_ops_add_op()`` builds the op's ``describe`` program (its ``op.h`` through
``ascend_ops/op_describe.hpp``), runs it, and runs this module on the JSON it prints::

    python -m ascend_ops.common.codegen DESCRIPTION.json OP OUT_DIR

which writes into OUT_DIR (installed into ``ascend_ops/<op>/``; read them there to see what an op
gets):

- ``_description.py``: the description itself (``DESCRIPTION``, a dict);
- ``api.py``: the public function, one for torch tensors, MindSpore tensors and NumPy arrays
  (``ascend_ops.common.front_door``);
- ``torch_ops.py``: the function over ``torch.ops.ascend_ops.<name>``, and the torchair converter
  registration;
- ``ms.py``: the MindSpore primitive (``ascend_ops.common.ms_front``) and the function graph
  compilers parse (so it is plain code, written out per op);
- ``ms_ascend/<op>_op.yaml``: the op definition of MindSpore's Ascend graph primitive
  (``CustomOpBuilder(op_def=...)``'s format), in the same form.

Keyword signatures and docstrings come from the description (``Op::params()``, ``Op::kDoc``).
"""
from __future__ import annotations

import json
import os
import pprint
import sys
from typing import Dict, List

_HEADER = "# Generated at build time from ops/{op}/op.h by ascend_ops.common.codegen: do not edit.\n"


def _wrap(head: str, items: List[str], tail: str, width: int = 100) -> str:
    """``head + ", ".join(items) + tail``, broken after commas so that no line passes 100
    characters; continuation lines start at the column after ``head``."""
    lead = " " * len(head.split("\n")[-1])
    lines, line = [], head
    for i, item in enumerate(items):
        last = i + 1 == len(items)
        piece = item + (", " if not last else "")
        if len(line) + len(piece.rstrip()) + (len(tail.split("\n")[0]) if last else 0) > width and line.strip() and line != head:
            lines.append(line.rstrip())
            line = lead
        line += piece
    lines.append(line.rstrip() + tail if not items else line + tail)
    return "\n".join(lines)


def _indent(text: str, prefix: str = "    ") -> str:
    return "".join(prefix + line if line.strip() else line for line in text.splitlines(True))


def _docstring(text: str) -> str:
    return _indent('"""' + text.strip("\n").replace("\\", "\\\\").replace('"""', '\\"\\"\\"') + '\n"""\n')


def _default(p: dict) -> str:
    return p["default"]


def _signature(params: List[dict], keyword_only: bool = True) -> List[str]:
    """``a, b, c=0, *, d=None`` in the description's order, keyword-only after its ``*`` (unless
    not keyword_only: MindSpore's function takes every argument by position, as its graphs do)."""
    parts: List[str] = []
    star = False
    for p in params:
        if keyword_only and p["keyword_only"] and not star:
            parts.append("*")
            star = True
        parts.append(p["name"] if p["default"] is None else f"{p['name']}={_default(p)}")
    return parts


def _call_args(params: List[dict]) -> List[str]:
    """Positional arguments by position, keyword-only ones by name."""
    return [p["name"] if not p["keyword_only"] else f"{p['name']}={p['name']}" for p in params]


def _spec(d: dict, op: str) -> str:
    params = [p["name"] for p in d["params"]]
    keyword = [p["name"] for p in d["params"] if p["keyword_only"]]
    first = [p["kind"] for p in d["params"]].index("tensor")
    return "\n".join([
        "_SPEC = _Spec(",
        f"    name={d['name']!r},",
        f"    package={'ascend_ops.' + op!r},",
        _wrap("    params=(", [repr(n) for n in params], ",),"),
        _wrap("    keyword_only=(", [repr(n) for n in keyword], ",)," if keyword else "),"),
        f"    has_outputs={bool(d['outputs'])!r},",
        f"    first_tensor={first},",
        ")"])


def api_py(d: dict, op: str) -> str:
    name, params = d["name"], d["params"]
    sig = _signature(params)
    sig += ([] if "*" in sig else ["*"]) + ["backend=None", "dtype=None", 'soc="Ascend910B2"', 'order="both"']
    doc = d["doc"].rstrip("\n") + """

NumPy arrays only
-----------------
backend : "cpu" (default, the C++ kernel) or "emu" (the AscendC kernel on the CPU emulator).
    torch and MindSpore tensors run on their own device.
    bfloat16 data is an ml_dtypes.bfloat16 array (outputs come back as such arrays).
dtype : "bfloat16" to read uint16 arrays as bfloat16 bit patterns instead (the convention before
    ml_dtypes, still accepted).
soc : backend="emu": the platform preset to emulate.
order : backend="emu": run the blocks "in_order", "shuffled", or "both" (and check that the
    results agree).
""" + ("With backend=\"emu\", an op that returns nothing returns the emulator's launch report\n"
       "(GM traffic, DMA, UB use).\n" if not d["outputs"] else "")
    args = [p["name"] for p in params]
    first = next(p["name"] for p in params if p["kind"] == "tensor")
    call = _call_args(params)
    ind = "        "
    return (_HEADER.format(op=op) + f'''"""{op}'s public function: torch tensors, MindSpore tensors or NumPy arrays."""
from ascend_ops.common.front_door import Spec as _Spec
from ascend_ops.common.front_door import call_numpy as _call_numpy
from ascend_ops.common.front_door import no_numpy_options as _no_numpy_options

__all__ = [{name!r}]

{_spec(d, op)}


{_wrap(f"def {name}(", sig, "):")}
{_docstring(doc)}    module = type({first}).__module__
    if module.startswith("torch"):
        _no_numpy_options(_SPEC, backend, dtype)
        from . import torch_ops

{_wrap(f"{ind}return torch_ops.{name}(", call, ")")}
    if module.startswith("mindspore"):
        _no_numpy_options(_SPEC, backend, dtype)
        from . import ms

{_wrap(f"{ind}return ms.{name}(", call, ")")}
{_wrap("    return _call_numpy(_SPEC, (", args, ",),")}
                       backend, dtype, soc, order)
''')


def torch_py(d: dict, op: str) -> str:
    name, params = d["name"], d["params"]
    doc = d["doc"].rstrip("\n") + f"""

PyTorch
-------
``torch.ops.ascend_ops.{name}``: eager (CPU, and NPU where built with torch_npu
and CANN), ``torch.compile`` (a Meta kernel), torchair (a GE converter where torchair is
installed).
"""
    return (_HEADER.format(op=op) + f'''"""PyTorch front door of {op}: ``torch.ops.ascend_ops.{name}``.

Importing this module loads the op's native ``_torch`` module (ascend_ops.common.loader.load_native,
which imports torch first); its static initialisers register the schema with CPU, Meta,
ADInplaceOrView and, where built with torch_npu and CANN, PrivateUse1 kernels. Where torchair is
installed (or torch_npu, which ships it, is already imported), the op's torchair GE converter is
registered too; call :func:`register_torchair_converter` after importing torch_npu if it was
imported later than this module.
"""
from ascend_ops.common import torchair as _torchair
from ascend_ops.common.loader import load_native

_native = load_native("ascend_ops.{op}", "torch")

import torch  # noqa: E402  (already imported by load_native)

__all__ = [{name!r}, "register_torchair_converter"]

_OP = torch.ops.ascend_ops.{name}.default


{_wrap(f"def {name}(", _signature(params), "):")}
{_docstring(doc)}{_wrap("    return _OP(", _call_args(params), ")")}


def register_torchair_converter() -> bool:
    """Register the torchair GE converter of the op if torchair is installed (True), else
    return False; see :func:`ascend_ops.common.torchair.register_converter`."""
    return _torchair.register_converter(__package__)


def _register_torchair_converter_on_import() -> None:
    _torchair.register_converter_on_import(__package__, {name!r})


_register_torchair_converter_on_import()
''')


def _class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def ms_py(d: dict, op: str) -> str:
    name, params, outputs = d["name"], d["params"], d["outputs"]
    body: List[str] = ["present = 0"]
    for i, p in enumerate(params):
        if p["kind"] == "str":
            body.append(f"{p['name']} = _code_{p['name']}({p['name']})")
        bits = [f"{p['name']} = float_bits({p['name']}, {name!r}, {p['name']!r})"] if p["kind"] == "float" else []
        if not p["optional"]:
            body += bits
            continue
        placeholder = "ABSENT" if p["kind"] == "tensor" else "0"
        body += [f"if {p['name']} is None:", f"    {p['name']} = {placeholder}", "else:"]
        body += ["    " + line for line in bits] + [f"    present = present + {1 << i}"]
    body += ["if on_ascend():", f"    primitive = npu_primitive({op!r}, {d['package']!r}, {op + '_npu'!r})",
             "else:", "    primitive = PRIMITIVE"]
    call_items = [p["name"] for p in params] + ["present"]
    flags = sorted({o["present_if"] for o in outputs if o["present_if"]})
    if len(flags) > 1:
        raise SystemExit(f"codegen: {op}: outputs present under more than one flag ({flags}) are not supported")
    if not flags:
        body.append(_wrap("return primitive(", call_items, ")", width=96))
    else:
        names = [o["name"] for o in outputs]
        body.append(_wrap(f"{', '.join(names)} = primitive(", call_items, ")", width=96))
        body += [f"if {flags[0]}:", f"    return {', '.join(names)}",
                 "return " + ", ".join("None" if o["present_if"] else o["name"] for o in outputs)]
    codes = ""
    for p in params:
        if p["kind"] != "str":
            continue
        lines = [f"def _code_{p['name']}(value):",
                 f'    """The graph code of {p["name"]} (plain comparisons: a graph folds them when compiled)."""']
        if p["optional"]:  # None stays None: the argument is then absent (its present bit unset)
            lines += ["    if value is None:", "        return None"]
        for c, choice in enumerate(p["choices"] or []):
            lines += [f"    if value == {choice!r}:", f"        return {c}"]
        lines.append(f"    return _native.choice_code({p['name']!r}, value)")
        codes += "\n\n" + "\n".join(lines) + "\n"
    returns = ("None in PyNative; in a graph an int32 [1] tensor holding 0 (ignore it)." if not outputs else
               "The outputs, as the other front doors return them.")
    doc = d["doc"].rstrip("\n") + f"""

MindSpore
---------
MindSpore tensors or Parameters, eagerly (PyNative), inside ``ms.jit`` functions and in
GRAPH_MODE Cells (see this module's docstring). Returns: {returns}
"""
    cls = _class_name(name)
    floats = any(p["kind"] == "float" for p in params)
    front_imports = "ABSENT, float_bits, primitive_class" if floats else "ABSENT, primitive_class"
    float_note = ",\n  a float as the int64 of its double's bits, ``float_bits``" if floats else ""
    return (_HEADER.format(op=op) + f'''"""MindSpore front door of {op}: PyNative, ``ms.jit`` and GRAPH_MODE Cells.

:func:`{name}` calls one primitive, :data:`PRIMITIVE` (a :class:`{cls}`, built by
``ascend_ops.common.ms_front``), which serves every mode; written arguments (Tensors or
Parameters) are updated in place, without copies.

- PyNative: the native entry ``_ms.{name}`` checks shapes, dtypes and layouts on the calling
  thread (``TypeError`` / ``ValueError`` right there, outputs untouched), then queues the kernel
  in program order with MindSpore's ops, without waiting for them. What only the data can tell
  is checked in the queued task and raised once, at MindSpore's next synchronisation
  (``asnumpy()``, ``print``) or at ``ascend_ops.common.check_errors()``, whichever comes first.
- Graph mode: the primitive is an ``ops.Custom`` aot op whose kernel is ``{'aop_' + op + '_aot'}`` in
  the same ``_ms`` library. Its inputs: the arguments in order (an absent optional tensor as
  :data:`ABSENT`, a str as its code{float_note}), then ``present`` (bit i: argument i is given). Dtypes and
  shapes are checked when the graph is compiled, with the PyNative exceptions and messages; what
  only the data can tell is found by the kernel when the graph runs, which writes nothing and
  MindSpore raises ``RuntimeError`` whose message carries ours.

Call :func:`{name}` or :data:`PRIMITIVE` inside graphs, not the package-level function (its framework
dispatch is Python that graph compilers reject). Device targets (CPU always, Ascend only where
built): see ``ascend_ops.common.ms_graph``. Import ``mindspore`` before this module.
"""
from ascend_ops.common.loader import load_native
from ascend_ops.common.ms_front import {front_imports}
from ascend_ops.common.ms_graph import npu_primitive, on_ascend

from ._description import DESCRIPTION

__all__ = [{name!r}, {op + '_npu'!r}, "PRIMITIVE", {cls!r}, "ABSENT"]

_native = load_native("ascend_ops.{op}", "mindspore")

{cls} = primitive_class({cls!r}, _native, DESCRIPTION)
#: The shared instance: graph compilers resolve it as a module-level primitive.
PRIMITIVE = {cls}()


{_wrap(f"def {name}(", _signature(params, keyword_only=False), "):")}
{_docstring(doc)}{_indent(chr(10).join(body) + chr(10))}{codes}

def {op}_npu(*args):
    """The eager function of the generated Ascend primitive (``_ms_graph.py`` imports it): the
    primitive's eager call, the PyNative entry (the AscendC kernel on MindSpore's stream; not run
    on NPU)."""
    return PRIMITIVE(*args)
''')


def ms_yaml(d: dict, op: str) -> str:
    lines = [f"# Generated at build time from ops/{op}/op.h by ascend_ops.common.codegen: the Ascend graph",
             "# primitive in the form of the aot one (ascend_ops/common/ms_front.py).",
             f"{op}_npu:", "  args:"]
    # a str is its code, a float its double's bits (ascend_ops/mindspore_graph.hpp)
    kinds = {"tensor": "tensor", "int": "int", "symint": "int", "str": "int", "bool": "bool", "float": "int"}
    for p in d["params"]:
        lines += [f"    {p['name']}:", f"      dtype: {kinds[p['kind']]}"]
    lines += ["    present:", "      dtype: int"]
    written = [p["name"] for p in d["params"] if p["written"]]
    if written:
        lines += ["  args_signature:", f"    rw_write: {', '.join(written)}", "  labels:", "    side_effect_mem: True"]
    lines.append("  returns:")
    for o in d["outputs"] or [{"name": "out"}]:
        lines += [f"    {o['name']}:", "      dtype: tensor"]
    lines += ["  class:", f"    name: {_class_name(op)}Npu"]
    return "\n".join(lines) + "\n"


def description_py(d: dict, op: str) -> str:
    return (_HEADER.format(op=op) + f'"""{op}\'s description (op.h), as the generators read it."""\n\n'
            f"DESCRIPTION = {pprint.pformat(d, width=110, sort_dicts=False)}\n")


def generate(description: dict, op: str) -> Dict[str, str]:
    """Every generated file, by its path under the output directory."""
    return {"_description.py": description_py(description, op), "api.py": api_py(description, op), "torch_ops.py": torch_py(description, op),
            "ms.py": ms_py(description, op), f"ms_ascend/{op}_op.yaml": ms_yaml(description, op)}


def main(argv: List[str]) -> int:
    if len(argv) != 3:
        print("usage: python -m ascend_ops.common.codegen DESCRIPTION.json OP OUT_DIR", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as f:
        description = json.load(f)
    for path, text in generate(description, argv[1]).items():
        target = os.path.join(argv[2], path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
