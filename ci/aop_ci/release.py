"""``ci/check-release``: every package a change touches is ready to be released on its own.

Range mode (pull requests): for each package whose own files changed in ``BASE...HEAD``
(``direct`` in ``ci/changed``; docs-only changes ask nothing):

1. its version (from its single source) is higher at HEAD than at BASE (a new package counts);
2. its ``CHANGELOG.md`` has a section for that version (``## 0.1.1``, ``## [0.1.1] - date``,
   ``## v0.1.1``), and the section is not empty;
3. its tag ``<package>-v<version>`` does not exist yet;
4. its recipe's literal ``context:`` (name, version, an op's name, common's ABI) agrees with it.

When common's version moves past its ``run_exports`` pin (major.minor, ``upper_bound="x.x"`` in
``common/recipe/recipe.yaml``), every op's conda package must be rebuilt against it to be
installable beside it, so every op is asked for a bump too.

Tag mode (the release workflow): ``--tag <package>-v<version>`` checks that the package exists,
that its single source and its recipe say that version and that its changelog has the entry; prints the
package as JSON (and the changelog section with ``--notes-file``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from .changed import _split_range, changed_files, compute
from .recipe import context as recipe_context
from .repo import ROOT, GitTree, Package, RepoError, Tree, discover, git, parse_tag, read_package

__all__ = ["PIN_PLACES", "changelog_section", "check_range", "check_tag", "main"]

#: Places of common's version its run_exports pin keeps (max_pin="x.x" in common's recipe).
PIN_PLACES = 2
_HEADING = re.compile(r"^(?P<hashes>#{1,3})\s+\[?v?(?P<version>[0-9][^\s\]]*)\]?(?:\s.*)?$")
_ANY_HEADING = re.compile(r"^#{1,3}\s")


def changelog_section(text: str, version: str) -> Optional[str]:
    """The body of the ``version`` section of a changelog, stripped, or None if there is none.

    A section starts at a heading of level 1-3 whose first word is the version (optionally
    ``v``-prefixed or in brackets) and ends at the next heading of level 1-3.
    """
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _HEADING.match(line.strip())
        if m and m.group("version") == version:
            body = []
            for nxt in lines[i + 1:]:
                if _ANY_HEADING.match(nxt):
                    break
                body.append(nxt)
            return "\n".join(body).strip()
    return None


def _version(text: str):
    from packaging.version import InvalidVersion, Version
    try:
        return Version(text)
    except InvalidVersion as exc:
        raise RepoError(f"version {text!r} is not a PEP 440 version") from exc


def _pin(version: str) -> tuple:
    return _version(version).release[:PIN_PLACES]


@dataclass
class Verdict:
    """The outcome for one package."""

    package: Package
    base_version: Optional[str]
    problems: List[str] = field(default_factory=list)
    why: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict:
        return {"package": self.package.name, "dir": self.package.dir,
                "base_version": self.base_version, "version": self.package.version,
                "tag": self.package.tag, "ok": self.ok, "problems": self.problems,
                "why": self.why}


def _tag_exists(root: Path, tag: str) -> bool:
    return bool(git(root, "rev-parse", "-q", "--verify", f"refs/tags/{tag}", check=False).strip())


def _check_package(root: Path, pkg: Package, head: Tree, base_pkg: Optional[Package]) -> List[str]:
    problems: List[str] = []
    if base_pkg is not None:
        try:
            if _version(pkg.version) <= _version(base_pkg.version):
                problems.append(f"version not bumped: {base_pkg.version} at base, {pkg.version} "
                                f"now (edit {pkg.version_file})")
        except RepoError as exc:
            problems.append(str(exc))
    text = head.read(pkg.changelog)
    if text is None:
        problems.append(f"{pkg.changelog} is missing")
    else:
        section = changelog_section(text, pkg.version)
        if section is None:
            problems.append(f"{pkg.changelog} has no '## {pkg.version}' section")
        elif not section:
            problems.append(f"{pkg.changelog}: the '## {pkg.version}' section is empty")
    if _tag_exists(root, pkg.tag):
        problems.append(f"tag {pkg.tag} already exists: {pkg.version} is released; bump again")
    problems += recipe_context.problems(head, pkg)
    return problems


def check_range(root: Path, base: str, head: str, merge_base: bool = True) -> List[Verdict]:
    """Check every package the range asks a release of (see the module docstring)."""
    head_tree = GitTree(root, head)
    head_packages = discover(head_tree)
    base_ref = git(root, "merge-base", base, head).strip() if merge_base else base
    base_tree = GitTree(root, base_ref)
    base_by_dir: Dict[str, Package] = {}
    for pkg in head_packages:
        try:
            base_by_dir[pkg.dir] = read_package(base_tree, pkg.dir, pkg.kind)
        except RepoError:
            pass  # new at head (or unreadable at base): nothing to compare with
    change = compute(changed_files(root, base, head, merge_base), head_packages)
    why: Dict[str, str] = {p.name: "changed: " + ", ".join(change.reasons.get(p.name, [])[:3])
                           for p in change.direct}
    common = next((p for p in head_packages if p.kind == "common"), None)
    if common is not None and common.dir in base_by_dir:
        before, now = base_by_dir[common.dir].version, common.version
        if _pin(before) != _pin(now):
            for p in head_packages:
                if p.kind == "op":
                    why.setdefault(p.name, f"{common.name} {before} -> {now} crosses its "
                                           f"run_exports pin: ops must be rebuilt against it")
    verdicts = []
    for pkg in head_packages:
        if pkg.name not in why:
            continue
        base_pkg = base_by_dir.get(pkg.dir)
        verdict = Verdict(pkg, base_pkg.version if base_pkg else None, why=why[pkg.name])
        verdict.problems = _check_package(root, pkg, head_tree, base_pkg)
        verdicts.append(verdict)
    return verdicts


def check_tag(root: Path, tag: str, head: str = "HEAD") -> dict:
    """Check a release tag against the tree at ``head``; return the package as a dict.

    Raises
    ------
    RepoError
        If the tag is malformed, names no package, or disagrees with the version source or
        the changelog.
    """
    name, version = parse_tag(tag)
    tree = GitTree(root, head)
    packages = {p.name: p for p in discover(tree)}
    if name not in packages:
        raise RepoError(f"tag {tag}: no package {name!r} (packages: {', '.join(packages)})")
    pkg = packages[name]
    if pkg.version != version:
        raise RepoError(f"tag {tag}: {pkg.version_file} says {pkg.version}, not {version}")
    mismatches = recipe_context.problems(tree, pkg)
    if mismatches:
        raise RepoError(f"tag {tag}: " + "; ".join(mismatches))
    text = tree.read(pkg.changelog)
    section = changelog_section(text, version) if text is not None else None
    if not section:
        raise RepoError(f"tag {tag}: {pkg.changelog} has no (or an empty) '## {version}' section")
    return dict(pkg.to_json(), notes=section)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ci/check-release",
        description="Check that every package whose files changed in a git range bumped its "
                    "version (in its single source) and has a CHANGELOG.md section for it, and "
                    "that its tag <package>-v<version> is free. With --tag, check a release "
                    "tag against the tree and print the package as JSON.",
        epilog="examples:  ci/check-release origin/main...HEAD   "
               "ci/check-release --tag ascend-op-reshape-and-cache-v0.1.1 --notes-file notes.md")
    p.add_argument("range", nargs="?", help="git range BASE...HEAD or BASE..HEAD (a single ref "
                   "means REF...HEAD); default origin/main...HEAD")
    p.add_argument("--tag", help="check this release tag <package>-v<version> instead")
    p.add_argument("--head", default="HEAD", help="revision the tag is checked against")
    p.add_argument("--notes-file", help="with --tag: write the changelog section here")
    p.add_argument("--github-output", action="store_true",
                   help="with --tag: append package=, dir=, version=, ... to $GITHUB_OUTPUT")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--root", default=str(ROOT), help="repository root (default: this checkout)")
    return p


def _main_tag(args: argparse.Namespace, root: Path) -> int:
    try:
        info = check_tag(root, args.tag, args.head)
    except RepoError as exc:
        print(f"ci/check-release: {exc}", file=sys.stderr)
        return 1
    if args.notes_file:
        Path(args.notes_file).write_text(f"{info['notes']}\n", encoding="utf-8")
    if args.github_output:
        out = os.environ.get("GITHUB_OUTPUT")
        if not out:
            print("ci/check-release: --github-output: $GITHUB_OUTPUT is not set", file=sys.stderr)
            return 2
        with open(out, "a", encoding="utf-8") as fh:
            for key in ("package", "kind", "dir", "op", "version", "recipe", "tag"):
                fh.write(f"{key}={info[key] or ''}\n")
    print(json.dumps(info, indent=2))
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    root = Path(args.root).resolve()
    if args.tag:
        return _main_tag(args, root)
    base, head, merge_base = _split_range(args.range or "origin/main...HEAD")
    try:
        verdicts = check_range(root, base, head, merge_base)
    except RepoError as exc:
        print(f"ci/check-release: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([v.to_json() for v in verdicts], indent=2))
    elif not verdicts:
        print("no package changed: nothing to release")
    else:
        for v in verdicts:
            was = v.base_version or "new"
            head_line = f"{v.package.name} {was} -> {v.package.version} ({v.why})"
            print(f"{'ok  ' if v.ok else 'FAIL'} {head_line}")
            for problem in v.problems:
                print(f"     - {problem}")
        bad = [v.package.name for v in verdicts if not v.ok]
        print(f"\n{len(verdicts) - len(bad)} ready, {len(bad)} not ready"
              + (f": {', '.join(bad)}" if bad else ""))
    return 1 if any(not v.ok for v in verdicts) else 0
