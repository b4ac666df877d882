"""Registration of an op's torchair GE converter, shared by every op's ``torch_ops`` module.

Each op keeps its converter in ``ascend_ops.<op>.torchair_converter`` (registering on import);
these helpers import it only where torchair exists, and report (never swallow) a torchair
that is installed but unusable.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import warnings

__all__ = ["torchair_installed", "register_converter", "register_converter_on_import"]


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
