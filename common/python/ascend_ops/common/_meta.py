"""Installed distribution versions, with ``importlib.metadata`` imported only when asked."""

from __future__ import annotations

from typing import Optional

__all__ = ["dist_version", "release"]


def dist_version(distribution: str) -> Optional[str]:
    """Return the installed version of ``distribution`` from its metadata, or None."""
    import importlib.metadata  # ~40 ms of imports: not at `import ascend_ops.common`

    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def release(text: Optional[str]) -> str:
    """Strip a local version label: ``"2.13.0+cpu"`` -> ``"2.13.0"``; None -> ``""``."""
    return (text or "").split("+", 1)[0].strip()
