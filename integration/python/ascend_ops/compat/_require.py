"""Imports an op package for a compat module, or says which package to install."""
from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["require_op"]


def require_op(module: str, package: str, caller: str) -> ModuleType:  # caller: the compat module
    """``importlib.import_module(module)``; if the op is not installed, an ImportError that names
    the compat function, the op's module and its conda / pip package."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is not None and not module.startswith(e.name) and e.name != module:
            raise  # something inside the op is missing: not the op itself
        raise ImportError(f"{caller} translates to {module}, which is not installed: install the "
                          f"{package} package (conda install {package})") from e
