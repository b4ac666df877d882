"""The literal ``context:`` of a package's recipe, checked against the package's one version source.

conda-build hands v1 recipes to rattler-build without its experimental features, so a recipe
cannot read ``pyproject.toml`` or the version file (``load_from_file``): its name, version (an
op's import name, common's C ABI) are written in ``context:``. The version is still bumped in one
place by hand, the version source; :func:`problems` (run by ``ci/check-release`` and the tests)
says where a recipe disagrees with it. Plain text parsing: the release check runs without PyYAML.
"""

from __future__ import annotations

import re
from typing import Dict, List

from ..repo import Package, Tree

__all__ = ["read_context", "problems"]

_ENTRY = re.compile(r"^  (?P<key>[A-Za-z_][A-Za-z0-9_]*):\s*(?P<value>.*?)\s*$")
_ABI = re.compile(r"^#define AOP_COMMON_ABI (\d+)", re.M)


def read_context(text: str) -> Dict[str, str]:
    """The ``key: value`` entries of the top-level ``context:`` mapping, quotes removed."""
    entries: Dict[str, str] = {}
    inside = False
    for line in text.splitlines():
        if line.startswith("context:"):
            inside = True
            continue
        if inside and line and not line.startswith(" "):
            break
        match = _ENTRY.match(line) if inside else None
        if match:
            value = match.group("value")
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            entries[match.group("key")] = value
    return entries


def problems(tree: Tree, pkg: Package) -> List[str]:
    """Where ``pkg``'s recipe context disagrees with its name, version source, op or C ABI."""
    path = f"{pkg.recipe_dir}/recipe.yaml"
    text = tree.read(path)
    if text is None:
        return [f"{path} is missing"]
    context = read_context(text)
    want = {"name": (pkg.name, "pyproject.toml"), "version": (pkg.version, pkg.version_file)}
    if pkg.kind == "op":
        want["op"] = (pkg.op or "", f"the directory {pkg.dir}")
    if pkg.kind == "common":
        abi = _ABI.search(tree.read(pkg.version_file) or "")
        want["abi"] = (abi.group(1) if abi else "?", pkg.version_file)
    found: List[str] = []
    for key, (value, source) in want.items():
        if key not in context:
            found.append(f"{path}: context has no {key} ({source} says {value!r})")
        elif context[key] != value:
            found.append(f"{path}: context {key} is {context[key]!r}, but {source} says {value!r}")
    return found
