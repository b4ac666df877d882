"""The packages of the monorepo, found by discovery, and their versions.

A package is ``common/`` (the runtime), ``devkit/`` (development tooling), any ``ops/<op>/``, or
``integration/`` (``ascend-ops``: every op, compat, demo) that has a ``pyproject.toml``; nothing
lists the ops. Each package has one version source, named in its ``pyproject.toml`` the way
scikit-build-core reads it (``[tool.scikit-build] metadata.version.input`` and ``.regex``):
``common/include/ascend_ops/version.h`` for common, ``python/ascend_ops/<op>/_version.py``
for an op, ``_version.py`` files for devkit and integration. The same reading works on the working tree (:class:`WorkTree`) and on any git
revision (:class:`GitTree`), so a release check can compare a version before and after.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = [
    "ROOT",
    "COMMON_DIR",
    "DEVKIT_DIR",
    "OPS_DIR",
    "INTEGRATION_DIR",
    "RepoError",
    "Package",
    "Tree",
    "WorkTree",
    "GitTree",
    "git",
    "discover",
    "read_package",
    "package_of",
    "release_tag",
    "parse_tag",
]

#: The repository this file belongs to (``ci/aop_ci/repo.py`` -> the checkout).
ROOT = Path(__file__).resolve().parents[2]
COMMON_DIR = "common"
DEVKIT_DIR = "devkit"
OPS_DIR = "ops"
INTEGRATION_DIR = "integration"
#: scikit-build-core's default pattern for ``metadata.version.provider = ...regex``.
DEFAULT_VERSION_REGEX = r"""(?i)^(__version__|VERSION)(?: ?\: ?str)? *= *(['"])v?(?P<value>.+?)\2"""
_REGEX_PROVIDER = "scikit_build_core.metadata.regex"
_TAG_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")
_TAG_VERSION = re.compile(r"[0-9][0-9A-Za-z.+!]*")


class RepoError(Exception):
    """The repository does not have the shape the tools expect; the message says where."""


@dataclass(frozen=True)
class Package:
    """One releasable package: common, devkit, an op or the integration package.

    Attributes
    ----------
    name : str
        Distribution and conda package name, e.g. ``ascend-op-my-op``.
    kind : str
        ``"common"``, ``"devkit"``, ``"op"`` or ``"integration"``.
    dir : str
        Directory relative to the repository root, POSIX style (``ops/my_op``).
    version : str
        The version read from the package's single source.
    version_file : str
        That source, relative to the repository root.
    """

    name: str
    kind: str
    dir: str
    version: str
    version_file: str

    @property
    def op(self) -> Optional[str]:
        """The op's import name (``my_op``), None for common."""
        return self.dir.rsplit("/", 1)[-1] if self.kind == "op" else None

    @property
    def recipe_dir(self) -> str:
        return f"{self.dir}/recipe"

    @property
    def changelog(self) -> str:
        return f"{self.dir}/CHANGELOG.md"

    @property
    def tag(self) -> str:
        """The release tag ``<package>-v<version>``."""
        return release_tag(self.name, self.version)

    def to_json(self) -> Dict[str, Optional[str]]:
        return {"package": self.name, "kind": self.kind, "dir": self.dir, "op": self.op,
                "version": self.version, "recipe": self.recipe_dir, "tag": self.tag}


def git(root: Path, *args: str, check: bool = True) -> str:
    """Run ``git -C root args...`` and return its stdout.

    Raises
    ------
    RepoError
        If git fails and ``check`` is true (the message carries git's own).
    """
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise RepoError(f"git {' '.join(args)} failed in {root}: {proc.stderr.strip()}")
    return proc.stdout


class Tree:
    """Read-only view of the repository's files: the working tree or one git revision."""

    root: Path

    def read(self, path: str) -> Optional[str]:
        """Text of ``path`` (relative, POSIX), or None if there is no such file."""
        raise NotImplementedError

    def subdirs(self, path: str) -> List[str]:
        """Names of the directories directly under ``path``, sorted."""
        raise NotImplementedError


class WorkTree(Tree):
    """The files on disk under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def read(self, path: str) -> Optional[str]:
        p = self.root / path
        return p.read_text(encoding="utf-8") if p.is_file() else None

    def subdirs(self, path: str) -> List[str]:
        p = self.root / path
        return sorted(c.name for c in p.iterdir() if c.is_dir()) if p.is_dir() else []

    def __repr__(self) -> str:
        return f"WorkTree({str(self.root)!r})"


class GitTree(Tree):
    """The files of revision ``ref`` of the git repository at ``root``."""

    def __init__(self, root: Path, ref: str) -> None:
        self.root = Path(root)
        self.ref = ref
        git(self.root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")

    def read(self, path: str) -> Optional[str]:
        proc = subprocess.run(["git", "-C", str(self.root), "cat-file", "-p", f"{self.ref}:{path}"],
                              capture_output=True)
        return proc.stdout.decode("utf-8") if proc.returncode == 0 else None

    def subdirs(self, path: str) -> List[str]:
        out = git(self.root, "ls-tree", "-d", "--name-only", self.ref, "--", path.rstrip("/") + "/")
        return sorted(line.rsplit("/", 1)[-1] for line in out.splitlines() if line)

    def __repr__(self) -> str:
        return f"GitTree({str(self.root)!r}, {self.ref!r})"


def _version_source(pyproject: dict, pkg_dir: str) -> Tuple[str, str]:
    """(version file relative to the root, regex) from a package's pyproject."""
    project = pyproject.get("project", {})
    if "version" in project:
        raise RepoError(f"{pkg_dir}/pyproject.toml: a static [project] version; the version must "
                        f"come from one source file through metadata.version (scikit-build-core)")
    meta = pyproject.get("tool", {}).get("scikit-build", {}).get("metadata", {}).get("version", {})
    if meta.get("provider") != _REGEX_PROVIDER or not meta.get("input"):
        raise RepoError(f"{pkg_dir}/pyproject.toml: expected [tool.scikit-build] "
                        f"metadata.version.provider = {_REGEX_PROVIDER!r} with an input file")
    return f"{pkg_dir}/{meta['input']}", meta.get("regex", DEFAULT_VERSION_REGEX)


def read_package(tree: Tree, pkg_dir: str, kind: str) -> Package:
    """Read one package's name and version from ``tree``.

    Raises
    ------
    RepoError
        If the pyproject or the version source is missing or does not give a version.
    """
    text = tree.read(f"{pkg_dir}/pyproject.toml")
    if text is None:
        raise RepoError(f"{pkg_dir}/pyproject.toml not found in {tree!r}")
    try:
        pyproject = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RepoError(f"{pkg_dir}/pyproject.toml: {exc}") from exc
    name = pyproject.get("project", {}).get("name")
    if not name:
        raise RepoError(f"{pkg_dir}/pyproject.toml: no [project] name")
    version_file, regex = _version_source(pyproject, pkg_dir)
    source = tree.read(version_file)
    if source is None:
        raise RepoError(f"{pkg_dir}: version source {version_file} not found in {tree!r}")
    match = re.search(regex, source, re.MULTILINE)
    if not match or not match.groupdict().get("value"):
        raise RepoError(f"{version_file}: no version matches {regex!r}")
    return Package(name=name, kind=kind, dir=pkg_dir, version=match.group("value"),
                   version_file=version_file)


def discover(tree: Tree) -> List[Package]:
    """Every package in ``tree``: common, devkit, each ``ops/<op>`` with a pyproject (by name),
    then integration.

    That order is also the build order (every op needs common in its host environment; the
    integration package needs every op).
    """
    packages: List[Package] = []
    if tree.read(f"{COMMON_DIR}/pyproject.toml") is not None:
        packages.append(read_package(tree, COMMON_DIR, "common"))
    if tree.read(f"{DEVKIT_DIR}/pyproject.toml") is not None:
        packages.append(read_package(tree, DEVKIT_DIR, "devkit"))
    for op in tree.subdirs(OPS_DIR):
        pkg_dir = f"{OPS_DIR}/{op}"
        if tree.read(f"{pkg_dir}/pyproject.toml") is not None:
            packages.append(read_package(tree, pkg_dir, "op"))
    if tree.read(f"{INTEGRATION_DIR}/pyproject.toml") is not None:
        packages.append(read_package(tree, INTEGRATION_DIR, "integration"))
    names = [p.name for p in packages]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise RepoError(f"two package directories declare the same name: {duplicates}")
    return packages


def package_of(path: str, packages: Iterable[Package]) -> Optional[Package]:
    """The package whose directory holds ``path`` (relative, POSIX), or None."""
    for pkg in packages:
        if path == pkg.dir or path.startswith(pkg.dir + "/"):
            return pkg
    return None


def release_tag(name: str, version: str) -> str:
    """``ascend-op-common``, ``0.1.0`` -> ``ascend-op-common-v0.1.0``."""
    return f"{name}-v{version}"


def parse_tag(tag: str) -> Tuple[str, str]:
    """Split a release tag ``<package>-v<version>`` (a ``refs/tags/`` prefix is allowed).

    Raises
    ------
    RepoError
        If the tag does not have that shape.
    """
    short = tag[len("refs/tags/"):] if tag.startswith("refs/tags/") else tag
    # The version starts after the *last* "-v", so a package name may itself hold "-v".
    name, sep, version = short.rpartition("-v")
    if not sep or not _TAG_NAME.fullmatch(name) or not _TAG_VERSION.fullmatch(version):
        raise RepoError(f"tag {tag!r} is not <package>-v<version> (e.g. ascend-op-common-v0.1.0)")
    return name, version
