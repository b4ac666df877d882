"""Write a conda package (``.conda``) from a staged directory, with conda-build's ``info/``.

``info/`` holds ``index.json`` (what the solver reads), ``paths.json`` and ``files`` (what
the installer links), ``about.json``, ``run_exports.json`` (if any), ``has_prefix`` (files
holding the build prefix, rewritten at install), ``recipe/`` and ``test/``. The archive is
written by conda-package-handling.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Dict, Iterable, Mapping, Optional, Sequence, Tuple

__all__ = ["PACKAGE_EXT", "detect_prefix", "write_conda"]

PACKAGE_EXT = ".conda"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def detect_prefix(stage: Path, files: Iterable[str], prefix: str) -> Dict[str, Tuple[str, str]]:
    """Files of ``stage`` that contain ``prefix``: path -> (placeholder, "text" | "binary").

    Like conda-build, a file with a NUL byte is binary (its prefix is replaced in place,
    padded with NULs, so the install prefix must not be longer than the build's).
    """
    needle = prefix.encode()
    found: Dict[str, Tuple[str, str]] = {}
    for rel in files:
        path = stage / rel
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        if needle in data:
            found[rel] = (prefix, "binary" if b"\0" in data else "text")
    return found


def _paths_json(stage: Path, files: Sequence[str],
                placeholders: Mapping[str, Tuple[str, str]]) -> dict:
    entries = []
    for rel in files:
        path = stage / rel
        if path.is_symlink():
            entries.append({"_path": rel, "path_type": "softlink",
                            "sha256": hashlib.sha256(os.readlink(path).encode()).hexdigest(),
                            "size_in_bytes": 0})
            continue
        entry = {"_path": rel, "path_type": "hardlink", "sha256": _sha256(path),
                 "size_in_bytes": path.stat().st_size}
        if rel in placeholders:
            placeholder, mode = placeholders[rel]
            entry.update(prefix_placeholder=placeholder, file_mode=mode)
        entries.append(entry)
    return {"paths": entries, "paths_version": 1}


def write_conda(stage: Path, files: Sequence[str], index: Mapping, out_dir: Path,
                about: Optional[Mapping] = None, run_exports: Optional[Mapping] = None,
                placeholders: Optional[Mapping[str, Tuple[str, str]]] = None,
                recipe_files: Optional[Mapping[str, str]] = None,
                test_files: Optional[Mapping[str, str]] = None) -> Path:
    """Pack ``files`` (relative to ``stage``) and a generated ``info/`` into a ``.conda``.

    Parameters
    ----------
    stage : Path
        Directory holding the payload; ``info/`` is (re)written inside it.
    files : sequence of str
        Payload paths relative to ``stage`` (POSIX).
    index : mapping
        ``info/index.json``: name, version, build, build_number, depends, constrains, ...
    out_dir : Path
        The channel subdirectory (``<channel>/linux-64``) the package goes to.

    Returns
    -------
    Path
        The written package file.
    """
    import conda_package_handling.api as cph

    placeholders = dict(placeholders or {})
    files = sorted(files)
    info = stage / "info"
    if info.exists():
        shutil.rmtree(info)
    info.mkdir(parents=True)
    index = dict(index)
    index.setdefault("timestamp", int(time.time() * 1000))
    written: Dict[str, str] = {
        "info/index.json": json.dumps(index, indent=2, sort_keys=True),
        "info/paths.json": json.dumps(_paths_json(stage, files, placeholders), indent=2),
        "info/files": "".join(f"{f}\n" for f in files),
        "info/about.json": json.dumps(dict(about or {}), indent=2, sort_keys=True),
    }
    if run_exports:
        written["info/run_exports.json"] = json.dumps(dict(run_exports), indent=2, sort_keys=True)
    if placeholders:
        written["info/has_prefix"] = "".join(
            f"{ph} {mode} {rel}\n" for rel, (ph, mode) in sorted(placeholders.items()))
    for rel, text in (recipe_files or {}).items():
        written[f"info/recipe/{rel}"] = text
    for rel, text in (test_files or {}).items():
        written[f"info/test/{rel}"] = text
    for rel, text in written.items():
        path = stage / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    out_dir.mkdir(parents=True, exist_ok=True)
    fname = f"{index['name']}-{index['version']}-{index['build']}{PACKAGE_EXT}"
    target = out_dir / fname
    if target.exists():
        target.unlink()
    cph.create(str(stage), sorted(written) + list(files), fname, out_folder=str(out_dir))
    if not target.is_file():
        raise RuntimeError(f"conda-package-handling did not write {target}")
    return target
