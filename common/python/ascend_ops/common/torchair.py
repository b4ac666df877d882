"""Registration of an op's torchair GE converter, shared by every op's ``torch_ops`` module.

Each op keeps its converter in ``ascend_ops.<op>.torchair_converter`` (registering on import, with
:func:`register_ge_converter` over its description); these helpers import it only where
torchair exists, and report (never swallow) a torchair that is installed but unusable.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import warnings
from typing import Any, Callable, Dict, Optional, Sequence

__all__ = ["torchair_installed", "register_converter", "register_converter_on_import", "register_ge_converter"]


def torchair_installed() -> bool:
    """Tell whether torchair can be imported, without importing it.

    torch_npu puts a lazy ``torchair`` module in ``sys.modules`` when it is imported;
    otherwise ``find_spec`` tells whether a standalone torchair is installed.
    """
    if sys.modules.get("torchair") is not None:
        return True
    try:
        return importlib.util.find_spec("torchair") is not None
    except (ImportError, ValueError):
        return False


def register_converter(package: str) -> bool:
    """Import ``<package>.torchair_converter`` (which registers on import) if torchair exists.

    Returns
    -------
    bool
        True if the converter is registered, False if torchair is not installed.

    Raises
    ------
    Exception
        Whatever importing torchair raises when it is installed but unusable (an ImportError
        without CANN, ...).
    """
    if not torchair_installed():
        return False
    importlib.import_module(f"{package}.torchair_converter")
    return True


def register_converter_on_import(package: str, op: str) -> None:
    """:func:`register_converter`, turning a failure into a RuntimeWarning naming the op: the
    op works without torchair, only GE graph mode will not know it."""
    try:
        register_converter(package)
    except Exception as exc:  # noqa: BLE001  (reported, not swallowed: no kernel depends on it)
        warnings.warn(
            f"{package}: torchair is installed but cannot be imported ({type(exc).__name__}: {exc}); "
            f"the torchair (GE graph mode) converter of {op} is not registered",
            RuntimeWarning,
            stacklevel=3,
        )


_GE_ATTRS = {"int": "Int", "symint": "Int", "str": "Str", "bool": "Bool", "float": "Float"}


def register_ge_converter(package: str, ge_op_type: str, *, attrs: Optional[Sequence[str]] = None,
                          check: Optional[Callable[[Dict[str, Any]], None]] = None) -> Callable[..., Any]:
    """Register the torchair converter of the op ``package`` describes (``<package>._description``):
    one ``ge_op_type`` node of the op's CANN custom op package. Call it from the op's
    ``torchair_converter`` module (imported only where torchair is installed).

    The node's inputs are the op's tensor arguments by name (None: an unconnected optional input);
    its attributes the other arguments (``attrs``: only these), typed by the description; its
    outputs the op's outputs, or for an op that writes in place the written tensors as ref
    outputs named like their inputs (torchair finds the updated tensors through them). ``check``
    sees the call's values first and raises (NotImplementedError) for a form the GE prototype
    lacks. The converter has the schema's signature plus ``meta_outputs``, as torchair calls it;
    it returns what the op returns (an optional output whose flag is false: None).
    """
    import torch
    import torchair

    from .front_door import schema_default

    description = importlib.import_module(f"{package}._description").DESCRIPTION
    params = description["params"]
    outputs = description["outputs"]
    ge_outputs = [o["name"] for o in outputs] or [p["name"] for p in params if p["written"]]
    ge_attrs = [p for p in params if p["kind"] != "tensor" and (attrs is None or p["name"] in attrs)]
    signature = inspect.Signature(
        [inspect.Parameter(p["name"], inspect.Parameter.KEYWORD_ONLY if p["keyword_only"] else
                           inspect.Parameter.POSITIONAL_OR_KEYWORD, default=schema_default(p["default"]))
         for p in params] + [inspect.Parameter("meta_outputs", inspect.Parameter.KEYWORD_ONLY, default=None)])

    def convert(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = dict(bound.arguments)
        if check is not None:
            check(values)
        node = {"inputs": {p["name"]: values[p["name"]] for p in params if p["kind"] == "tensor"},
                "outputs": list(ge_outputs)}
        if ge_attrs:
            node["attrs"] = {p["name"]: getattr(torchair.ge.attr, _GE_ATTRS[p["kind"]])(values[p["name"]])
                             for p in ge_attrs}
        result = torchair.ge.custom_op(ge_op_type, **node)
        if not outputs:
            return None
        results = list(result) if len(outputs) > 1 else [result]
        for i, o in enumerate(outputs):
            if o["present_if"] and not values[o["present_if"]]:
                results[i] = None
        return tuple(results) if len(outputs) > 1 else results[0]

    convert.__signature__ = signature  # type: ignore[attr-defined]
    convert.__name__ = convert.__qualname__ = f"convert_{description['name']}"
    convert.__doc__ = f"Emit one {ge_op_type} node (ascend_ops.common.torchair.register_ge_converter)."
    op = getattr(torch.ops.ascend_ops, description["name"]).default
    torchair.register_fx_node_ge_converter(op)(convert)
    return convert
