"""The Python front doors generated at build time from each op's description (op.h, through its
``describe`` program and ``ascend_ops.common.codegen``), for every installed op: the signatures
are the description's (names, order, keyword-only arguments, schema defaults), the torch function
matches the registered schema, the docstrings are the description's, and the generated files are
what the generator makes of the installed ``_description`` (nothing stale)."""
from __future__ import annotations

import importlib
import importlib.util
import inspect
from pathlib import Path

import pytest

from ascend_ops.common import codegen
from ascend_ops.common.front_door import schema_default as default
from ascend_ops.common.registry import installed_ops

OPS = [op.name for op in installed_ops()]
NUMPY_OPTIONS = {"backend": None, "dtype": None, "soc": "Ascend910B2", "order": "both"}


def description(op: str) -> dict:
    return importlib.import_module(f"ascend_ops.{op}._description").DESCRIPTION


def expected(d: dict, keyword_only: bool = True) -> list:
    kind = inspect.Parameter
    return [(p["name"], kind.KEYWORD_ONLY if keyword_only and p["keyword_only"] else kind.POSITIONAL_OR_KEYWORD,
             default(p["default"])) for p in d["params"]]


def signature(fn) -> list:
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("op", OPS)
def test_the_public_function_has_the_description_signature_and_doc(op):
    d = description(op)
    fn = getattr(importlib.import_module(f"ascend_ops.{op}"), d["name"])
    options = [(n, inspect.Parameter.KEYWORD_ONLY, v) for n, v in NUMPY_OPTIONS.items()]
    assert signature(fn) == expected(d) + options
    assert inspect.getdoc(fn).startswith(d["doc"].splitlines()[0])
    assert "backend" in inspect.getdoc(fn)  # the NumPy options are documented


@pytest.mark.parametrize("op", OPS)
def test_the_torch_function_matches_the_registered_schema(op):
    pytest.importorskip("torch", reason="torch is not installed")
    import torch

    d = description(op)
    module = importlib.import_module(f"ascend_ops.{op}.torch_ops")
    fn = getattr(module, d["name"])
    assert signature(fn) == expected(d)
    schema = getattr(torch.ops.ascend_ops, d["name"]).default._schema
    assert [(a.name, a.kwarg_only) for a in schema.arguments] == [(p["name"], p["keyword_only"]) for p in d["params"]]
    for arg, p in zip(schema.arguments, d["params"]):
        if arg.has_default_value():
            assert arg.default_value == default(p["default"]), p["name"]
    assert inspect.getdoc(fn).startswith(d["doc"].splitlines()[0])


@pytest.mark.parametrize("op", OPS)
def test_the_mindspore_function_takes_every_argument_by_position(op):
    pytest.importorskip("mindspore", reason="mindspore is not installed")
    d = description(op)
    fn = getattr(importlib.import_module(f"ascend_ops.{op}.ms"), d["name"])
    assert signature(fn) == expected(d, keyword_only=False)  # as a graph's call passes them
    assert inspect.getdoc(fn).startswith(d["doc"].splitlines()[0])


@pytest.mark.parametrize("op", OPS)
def test_the_installed_files_are_what_the_generator_makes(op):
    d = description(op)
    package = importlib.import_module(f"ascend_ops.{op}")
    for path, text in codegen.generate(d, op).items():
        if path.endswith(".py"):
            module = importlib.util.find_spec(f"ascend_ops.{op}.{Path(path).stem}")
            assert module is not None and module.origin is not None, path
            assert Path(module.origin).read_text() == text, f"{path} is stale: rebuild the op"
    assert package.__name__ == f"ascend_ops.{op}"


def test_the_generator_refuses_outputs_under_two_flags():
    d = {"name": "x", "package": "ascend-op-x", "doc": "x.\n", "params": [
        {"name": "a", "kind": "tensor", "written": False, "optional": False, "keyword_only": False, "default": None,
         "choices": None},
        {"name": "f", "kind": "bool", "written": False, "optional": False, "keyword_only": False, "default": "False",
         "choices": None},
        {"name": "g", "kind": "bool", "written": False, "optional": False, "keyword_only": False, "default": "False",
         "choices": None}],
         "outputs": [{"name": "o", "dtype": "float32", "present_if": "f"},
                     {"name": "p", "dtype": "float32", "present_if": "g"}]}
    with pytest.raises(SystemExit, match="more than one flag"):
        codegen.ms_py(d, "x")


def test_an_optional_str_passes_none_to_a_mindspore_graph_as_absent():
    """The MindSpore front door codes a str argument as the index of its choice; an optional str
    that is None stays None (absent: its present bit unset), never a choice lookup of None."""
    d = {"name": "x", "package": "ascend-op-x", "doc": "x.\n", "outputs": [], "params": [
        {"name": "a", "kind": "tensor", "written": False, "optional": False, "keyword_only": False, "default": None,
         "choices": None},
        {"name": "fmt", "kind": "str", "written": False, "optional": True, "keyword_only": True, "default": "None",
         "choices": ["p", "q"]},
        {"name": "mode", "kind": "str", "written": False, "optional": False, "keyword_only": True,
         "default": "\"u\"", "choices": ["u", "v"]}]}
    source = codegen.ms_py(d, "x")
    looked_up = []

    class Native:
        @staticmethod
        def choice_code(name, value):
            looked_up.append((name, value))
            raise ValueError(f"x: {name} should be one of ... but is {value!r}")

    space = {"_native": Native}
    for fn in ("_code_fmt", "_code_mode"):
        start = source.index(f"def {fn}(")
        exec(source[start:source.index("\n\n", start)], space)
    assert space["_code_fmt"](None) is None and space["_code_fmt"]("q") == 1
    assert space["_code_mode"]("v") == 1 and not looked_up
    with pytest.raises(ValueError, match="mode should be one of"):
        space["_code_mode"](None)
    with pytest.raises(ValueError, match="fmt should be one of"):
        space["_code_fmt"]("r")
    body = source[source.index("present = 0"):]
    # the code is taken before the None check, so None reaches `if fmt is None` and stays absent
    assert body.index("fmt = _code_fmt(fmt)") < body.index("if fmt is None:")
