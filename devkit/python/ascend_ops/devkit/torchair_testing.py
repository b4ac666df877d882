"""Test helpers for an op's torchair converter (``ascend_ops.<op>.torchair_converter``): a
stand-in ``torchair`` module (the real one needs CANN) and a way to make the next registration
import the converter again. Used by ``tests/test_torch_front_doors.py`` and the ops' own tests."""
from __future__ import annotations

import importlib
import sys
import types
from typing import Dict, Iterator, List

__all__ = ["forget_converter", "stand_in_torchair"]


def forget_converter(monkeypatch, package: str) -> None:
    """Make the next registration of ``package``'s converter import its module again."""
    monkeypatch.delitem(sys.modules, f"{package}.torchair_converter", raising=False)
    monkeypatch.delattr(importlib.import_module(package), "torchair_converter", raising=False)


def stand_in_torchair(monkeypatch, package: str) -> Iterator[Dict[str, List]]:
    """A fixture body: a stand-in ``torchair`` recording registrations (``"register"``: (aten op,
    converter)) and ``torchair.ge.custom_op`` calls (``"custom_op"``: dicts of op_type, args,
    inputs, outputs, attrs and the results returned, one object per output). Only the public
    entries converters use: ``register_fx_node_ge_converter``, ``ge.custom_op``, ``ge.attr.{Int,
    Float, Str, Bool}`` (each keeps ``.value``)."""
    calls: Dict[str, List] = {"register": [], "custom_op": []}
    fake = types.ModuleType("torchair")

    def register_fx_node_ge_converter(aten_op):
        def register(fn):
            calls["register"].append((aten_op, fn))
            return fn

        return register

    def custom_op(op_type, *args, inputs=None, outputs=None, attrs=None, node_name=None):
        results = tuple(object() for _ in outputs or ())
        calls["custom_op"].append(dict(op_type=op_type, args=args, inputs=inputs, outputs=outputs, attrs=attrs,
                                       results=results))
        return results if len(results) != 1 else results[0]

    class Attr:
        def __init__(self, value):
            self.value = value

    fake.register_fx_node_ge_converter = register_fx_node_ge_converter
    fake.ge = types.SimpleNamespace(custom_op=custom_op, attr=types.SimpleNamespace(
        **{kind: type(kind, (Attr,), {}) for kind in ("Int", "Float", "Str", "Bool")}))
    monkeypatch.setitem(sys.modules, "torchair", fake)
    forget_converter(monkeypatch, package)
    yield calls
    sys.modules.pop(f"{package}.torchair_converter", None)
    forget_converter(monkeypatch, package)
