"""``torch.ops.ascend_ops.<op>`` exists once torch and the op package are both imported.

Each op package calls :func:`register_when_torch_imported` from its ``__init__``: if torch is
imported already, the op's ``torch_ops`` module (which loads the native ``_torch`` module and
so registers the schema and kernels) is imported now; otherwise right after ``import torch``,
whatever the order of the user's imports. The op package itself never imports torch, so a
MindSpore-only process does not load it.

An op built without its torch adapter registers nothing (``ascend-ops list`` says so, and a
call with torch tensors raises :class:`~ascend_ops.common.errors.AdapterNotBuilt`). An adapter
that is built but fails to load raises here when torch was imported first (the user's
``import ascend_ops.<op>`` fails with the loader's message); when torch is imported later, the
same message comes as a RuntimeWarning, since ``import torch`` itself must not fail because of
an op.
"""
from __future__ import annotations

import importlib

from .import_hooks import when_imported
from .loader import build_info

__all__ = ["register_when_torch_imported"]


def register_when_torch_imported(package: str) -> None:
    """Import ``<package>.torch_ops`` as soon as torch is imported (now if it already is)."""
    when_imported("torch", lambda _torch: _register(package))


def _register(package: str) -> None:
    info = build_info(package)
    if info is not None and not getattr(info, "FRAMEWORKS", {}).get("torch", False):
        return
    importlib.import_module(f"{package}.torch_ops")
