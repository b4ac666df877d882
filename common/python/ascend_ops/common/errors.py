"""Exceptions raised when the common library or an op's native module cannot be used.

Every one of them is an :class:`ImportError`, so ``import ascend_ops.<op>`` style code that
already expects import failures keeps working, and every message says what to install or
rebuild. Nothing in ``ascend_ops.common`` catches them to fall back to another backend.
"""

from __future__ import annotations

__all__ = [
    "NativeImportError",
    "CommonLibraryError",
    "FrameworkMissing",
    "OpNotInstalled",
    "AdapterNotBuilt",
    "AbiMismatch",
    "FrameworkVersionMismatch",
    "NativeLoadError",
]


class NativeImportError(ImportError):
    """Base class: a native piece of ascend-ops could not be loaded."""


class CommonLibraryError(NativeImportError):
    """``libascend_ops_common.so`` is missing, unloadable or does not match this package."""


class FrameworkMissing(NativeImportError):
    """The framework an adapter needs (torch or mindspore) is not installed."""


class OpNotInstalled(NativeImportError):
    """The op's Python package itself cannot be imported."""


class AdapterNotBuilt(NativeImportError):
    """The op is installed but this native module was not built (e.g. no torch at build time)."""


class AbiMismatch(NativeImportError):
    """A native module was built against another ABI of ascend-op-common than the one installed."""


class FrameworkVersionMismatch(NativeImportError):
    """An adapter was built against another torch / mindspore version than the one installed."""


class NativeLoadError(NativeImportError):
    """The native module exists but the dynamic loader rejected it (missing symbol, ...)."""
