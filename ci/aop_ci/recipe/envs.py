"""Conda environments without conda: index, solve and install with py-rattler, offline.

Channels are local directories (``file://``). Every prefix is then made a Python environment
with ``python -m venv --without-pip`` of the running interpreter, laid over the installed
files: the stand-in ``python`` package carries no interpreter (see :mod:`.standins`).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Optional, Sequence

__all__ = ["SolveError", "index_channel", "solve", "install", "installed", "make_python_prefix",
           "virtual_packages", "record_key"]


class SolveError(Exception):
    """The solver found no solution (or could not run); the message is rattler's."""


def index_channel(channel: Path, platform: str) -> None:
    """Write ``repodata.json`` for ``channel/<platform>`` and ``channel/noarch``."""
    from rattler.index import index_fs
    (channel / platform).mkdir(parents=True, exist_ok=True)
    (channel / "noarch").mkdir(parents=True, exist_ok=True)
    asyncio.run(index_fs(channel, write_zst=False, write_shards=False, force=True))


def virtual_packages() -> list:
    """This machine's virtual packages (``__glibc``, ``__linux``, ``__unix``, ``__archspec``)."""
    import rattler
    return [vp.into_generic() for vp in rattler.VirtualPackage.detect()]


def solve(channels: Sequence[Path], specs: Sequence[str], platform: str, cache: Path,
          virtual: Optional[list] = None) -> list:
    """Solve ``specs`` against local ``channels`` (highest versions first).

    Raises
    ------
    SolveError
        With rattler's explanation when there is no solution.
    """
    import rattler
    gateway = rattler.Gateway(cache_dir=cache, show_progress=False)
    sources = [rattler.Channel(Path(c).resolve().as_uri()) for c in channels]
    try:
        return asyncio.run(rattler.solve(sources, list(specs), gateway=gateway,
                                         platforms=[platform, "noarch"],
                                         virtual_packages=virtual_packages() if virtual is None
                                         else virtual))
    except Exception as exc:  # rattler raises its own SolverError / parse errors
        raise SolveError(f"{type(exc).__name__}: {exc}") from exc


def installed(prefix: Path) -> list:
    """The packages installed in ``prefix`` (its ``conda-meta/*.json``)."""
    import rattler
    return [rattler.PrefixRecord.from_path(p) for p in sorted((prefix / "conda-meta").glob("*.json"))]


def install(records: list, prefix: Path, cache: Path, present: Optional[list] = None) -> None:
    """Install solved ``records`` into ``prefix`` with rattler's installer; ``present`` are the
    prefix's installed records (then only the difference is linked)."""
    import rattler
    asyncio.run(rattler.install(records, prefix, cache_dir=cache, show_progress=False,
                                installed_packages=present))


def make_python_prefix(prefix: Path) -> Path:
    """Make ``prefix`` a venv of the running interpreter (keeps its files); return its python."""
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(prefix)], check=True,
                   capture_output=True, text=True)
    return prefix / "bin" / "python"


def record_key(record) -> str:
    """``name-version-build`` of a solved record."""
    return f"{record.name.normalized}-{record.version}-{record.build}"
