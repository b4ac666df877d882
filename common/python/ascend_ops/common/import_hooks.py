"""Run a function once a module has been imported, now or whenever it is imported later.

An op package registers its ``torch.ops.ascend_ops.*`` entries as soon as torch is in the
process, without importing torch itself (MindSpore users never pay for it):
``when_imported("torch", load_torch_adapter)`` runs at once if torch is already imported,
otherwise right after ``import torch`` finishes, in whichever order the user imports things.

The hook wraps the loader of the watched module's spec; every other attribute of the loader
is forwarded, so the module sees the loader it would have had. A callback that raises is
reported as a RuntimeWarning naming it: it never makes the watched import itself fail.

Kept by hand: wrapt's post-import hooks do the same, but would be the runtime's one dependency
beside numpy, for about 80 lines.
"""
from __future__ import annotations

import importlib.abc
import sys
import threading
import warnings
from types import ModuleType
from typing import Callable, Dict, List

__all__ = ["when_imported"]

Callback = Callable[[ModuleType], None]

_lock = threading.RLock()
_pending: Dict[str, List[Callback]] = {}


def when_imported(name: str, callback: Callback) -> None:
    """Call ``callback(module)`` once module ``name`` is fully imported.

    If it is imported already, the callback runs now (its exceptions propagate to the caller).
    Otherwise it runs right after the module's own code has finished executing; an exception
    there becomes a RuntimeWarning and the import goes on.
    """
    with _lock:
        module = sys.modules.get(name)
        if module is None or _is_initializing(module):
            _pending.setdefault(name, []).append(callback)
            _install_finder()
            return
    callback(module)


def _is_initializing(module: ModuleType) -> bool:
    spec = getattr(module, "__spec__", None)
    return bool(getattr(spec, "_initializing", False))


def _run_pending(name: str, module: ModuleType) -> None:
    with _lock:
        callbacks = _pending.pop(name, [])
    for callback in callbacks:
        try:
            callback(module)
        except Exception as exc:  # noqa: BLE001  (reported: the user's import must go on)
            warnings.warn(
                f"ascend_ops: {getattr(callback, '__qualname__', callback)} failed after "
                f"`import {name}` ({type(exc).__name__}: {exc})",
                RuntimeWarning,
                stacklevel=2,
            )


class _Loader(importlib.abc.Loader):
    """The watched module's own loader, with the pending callbacks run after exec_module."""

    def __init__(self, inner, name: str) -> None:
        self._inner = inner
        self._name = name

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._inner.exec_module(module)
        _run_pending(self._name, module)

    def __getattr__(self, attr):  # get_data, get_resource_reader, is_package, ...
        return getattr(self._inner, attr)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: asks the finders after it and wraps the loader of watched names."""

    def find_spec(self, fullname, path, target=None):
        with _lock:
            if fullname not in _pending:
                return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(spec.loader, fullname)
                return spec
        return None


_finder = _Finder()


def _install_finder() -> None:
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
