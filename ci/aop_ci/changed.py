"""``ci/changed``: which packages a git range touches, as JSON for a CI matrix.

Every changed path is put in one class:

==========  ==========================================  =====================================
class       paths                                       touches
==========  ==========================================  =====================================
docs        ``docs/**``, any ``*.md`` / ``*.rst``       nothing
package     ``common/**``, ``devkit/**``, ``ops/<op>/**``, that package; common touches every
            ``integration/**``                          package
channel     ``recipes/**`` (variants, channel config)   every package
infra       everything else (``ci/``, ``.github/``,     no package; reported as ``infra`` so
            ``tests/``, ``dev``, ``tools/`` ...)        CI runs the cross-op tests
==========  ==========================================  =====================================

Packages are found by discovery at the head revision (an op deleted in the range is listed
under ``removed``). ``packages`` is in build order (common first) and feeds the test matrix;
``direct`` holds only the packages whose own files changed (what ``ci/check-release`` asks a
version bump of).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from .repo import (COMMON_DIR, OPS_DIR, ROOT, GitTree, Package, RepoError, Tree, WorkTree,
                   discover, git, package_of)

__all__ = ["DOC_SUFFIXES", "Change", "classify", "changed_files", "compute", "main"]

DOC_SUFFIXES = (".md", ".rst")
DOC_DIRS = ("docs/",)
CHANNEL_DIRS = ("recipes/",)


def is_doc(path: str) -> bool:
    """Documentation only: ``docs/**`` or a Markdown / reStructuredText file anywhere."""
    return path.startswith(DOC_DIRS) or path.lower().endswith(DOC_SUFFIXES)


def classify(path: str, packages: Sequence[Package]) -> str:
    """``"docs"``, ``"channel"``, ``"package"``, ``"removed"`` (under ``ops/<op>/`` of an op
    that is gone at head) or ``"infra"``."""
    if is_doc(path):
        return "docs"
    if path.startswith(CHANNEL_DIRS):
        return "channel"
    if package_of(path, packages) is not None:
        return "package"
    parts = path.split("/")
    if path.startswith(COMMON_DIR + "/") or (parts[0] == OPS_DIR and len(parts) > 2):
        return "removed"
    return "infra"


@dataclass
class Change:
    """What a range touches. ``reasons`` maps each touched package to the paths (or the rule)
    that touched it."""

    range: str
    packages: List[Package]
    direct: List[Package]
    removed: List[str]
    infra: List[str]
    docs: List[str]
    reasons: Dict[str, List[str]] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "range": self.range,
            "packages": [p.name for p in self.packages],
            "direct": [p.name for p in self.direct],
            "removed": self.removed,
            "any": bool(self.packages),
            "infra": bool(self.infra),
            "infra_files": self.infra,
            "docs_files": self.docs,
            "reasons": self.reasons,
            # GitHub Actions: strategy.matrix: ${{ fromJSON(needs.changed.outputs.matrix) }}
            "matrix": {"include": [p.to_json() for p in self.packages]},
        }


def changed_files(root: Path, base: str, head: str, merge_base: bool = True) -> List[str]:
    """Paths changed between ``base`` and ``head`` (both sides of a rename count).

    With ``merge_base`` (``base...head``, what a pull request shows) the comparison starts at
    the merge base, so commits that landed on ``base`` meanwhile are not counted.
    """
    spec = f"{base}...{head}" if merge_base else f"{base}..{head}"
    out = git(root, "diff", "--name-status", "--no-renames", "-z", spec, "--")
    fields = [f for f in out.split("\0") if f]
    paths: List[str] = []
    i = 0
    while i < len(fields):
        status = fields[i]
        n = 2 if status[:1] in ("R", "C") else 1
        paths.extend(fields[i + 1:i + 1 + n])
        i += 1 + n
    return sorted(set(paths))


def compute(files: Sequence[str], packages: Sequence[Package], range_: str = "",
            removed_ops: Sequence[str] = ()) -> Change:
    """Apply the rules to ``files`` given the packages that exist at head."""
    by_name = {p.name: p for p in packages}
    common = next((p for p in packages if p.kind == "common"), None)
    reasons: Dict[str, List[str]] = {}
    direct: List[str] = []
    removed, infra, docs = set(removed_ops), [], []
    every = False
    for path in files:
        kind = classify(path, packages)
        if kind == "docs":
            docs.append(path)
        elif kind == "infra":
            infra.append(path)
        elif kind == "channel":
            every = True
            for p in packages:
                reasons.setdefault(p.name, []).append(path)
        elif kind == "removed":
            removed.add("/".join(path.split("/")[:2]))
        else:
            pkg = package_of(path, packages)
            assert pkg is not None
            reasons.setdefault(pkg.name, []).append(path)
            if pkg.name not in direct:
                direct.append(pkg.name)
    touched = set(reasons)
    if common is not None and common.name in direct:
        for p in packages:
            if p.kind == "op" and p.name not in direct:
                reasons.setdefault(p.name, []).append(f"(through {common.name})")
        touched = {p.name for p in packages}
    if every:
        touched = {p.name for p in packages}
    order = [p for p in packages if p.name in touched]  # discover() order: common first
    return Change(range=range_, packages=order,
                  direct=[by_name[n] for n in [p.name for p in packages] if n in direct],
                  removed=sorted(removed), infra=infra, docs=docs, reasons=reasons)


def _split_range(text: str) -> tuple:
    if "..." in text:
        base, head = text.split("...", 1)
        return base or "HEAD", head or "HEAD", True
    if ".." in text:
        base, head = text.split("..", 1)
        return base or "HEAD", head or "HEAD", False
    return text, "HEAD", True


def resolve(args: argparse.Namespace) -> Change:
    """The :class:`Change` the command-line arguments ask for."""
    root = Path(args.root).resolve()
    if args.files is not None:
        tree: Tree = WorkTree(root)
        return compute(sorted(set(args.files)), discover(tree), range_="(files given)")
    if args.range:
        base, head, merge_base = _split_range(args.range)
    else:
        base, head, merge_base = args.base, args.head, True
    files = changed_files(root, base, head, merge_base)
    head_packages = discover(GitTree(root, head))
    base_tree = GitTree(root, base)
    head_dirs = {p.dir for p in head_packages}
    removed = [p.dir for p in discover(base_tree) if p.dir not in head_dirs]
    sep = "..." if merge_base else ".."
    return compute(files, head_packages, range_=f"{base}{sep}{head}", removed_ops=removed)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ci/changed",
        description="Print, as JSON, the packages (common and ops) that a git range touches. "
                    "A change under common/ touches every op; recipes/ touches every package; "
                    "docs-only changes (docs/, *.md, *.rst) touch nothing; other paths (ci/, "
                    ".github/, tests/, ...) touch no package and set \"infra\". The \"matrix\" "
                    "key is ready for a GitHub Actions strategy.matrix.",
        epilog="examples:  ci/changed origin/main...HEAD   ci/changed --files common/src/x.cpp")
    p.add_argument("range", nargs="?", help="git range BASE...HEAD (from the merge base, the "
                   "default form) or BASE..HEAD; a single ref means REF...HEAD")
    p.add_argument("--base", default="origin/main", help="base ref when no range is given "
                   "(default: origin/main)")
    p.add_argument("--head", default="HEAD", help="head ref when no range is given (default: HEAD)")
    p.add_argument("--files", nargs="*", metavar="PATH",
                   help="classify these repository paths instead of a git range")
    p.add_argument("--root", default=str(ROOT), help="repository root (default: this checkout)")
    p.add_argument("--github-output", action="store_true",
                   help="also append matrix=, packages=, any=, infra= lines to $GITHUB_OUTPUT")
    p.add_argument("--pretty", action="store_true", help="indented JSON")
    return p


def write_github_output(change: Change, path: Optional[str]) -> None:
    """Append the step outputs a workflow reads (one line each, compact JSON)."""
    if not path:
        raise RepoError("--github-output: $GITHUB_OUTPUT is not set")
    data = change.to_json()
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(f"matrix={json.dumps(data['matrix'], separators=(',', ':'))}\n")
        fh.write(f"packages={json.dumps(data['packages'], separators=(',', ':'))}\n")
        fh.write(f"any={'true' if data['any'] else 'false'}\n")
        fh.write(f"infra={'true' if data['infra'] else 'false'}\n")


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        change = resolve(args)
        if args.github_output:
            write_github_output(change, os.environ.get("GITHUB_OUTPUT"))
    except RepoError as exc:
        print(f"ci/changed: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(change.to_json(), indent=2 if args.pretty else None))
    return 0
