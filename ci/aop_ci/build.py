"""``ci/build``: build the touched packages -- wheels here, conda packages where conda is.

Wheels: ``python -m pip wheel <pkg> --no-deps --no-build-isolation`` for each package, common
first, into ``<out>/wheels`` (the running Python must have the build requirements; an op also
needs ``ascend_ops.common`` importable, which a common wheel built in the same run provides).

Conda packages: where ``conda`` (with conda-build) is on PATH, ``conda build`` of the same
packages' recipes with ``recipes/conda_build_config.yaml`` into ``<out>/conda``, which is
also a channel of the build so an op finds the common built just before it. There is no conda
on the CPU runners or the development machines: there ``--conda auto`` (the default) says so
and ``ci/recipe-check`` is what checks the recipes.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from .changed import _split_range, changed_files, compute
from .repo import ROOT, Package, RepoError, WorkTree, discover

__all__ = ["wheel_command", "conda_command", "main"]


def wheel_command(root: Path, pkg: Package, out: Path, python: str = sys.executable) -> List[str]:
    return [python, "-m", "pip", "wheel", str(root / pkg.dir), "--no-deps",
            "--no-build-isolation", "--wheel-dir", str(out / "wheels")]


def conda_command(conda: str, root: Path, packages: Sequence[Package], out: Path,
                  channels: Sequence[str], variants: Dict[str, List[str]]) -> List[str]:
    cmd = [conda, "build", *[str(root / p.recipe_dir) for p in packages],
           "-m", str(root / "recipes" / "conda_build_config.yaml"),
           "--output-folder", str(out / "conda"), "--no-anaconda-upload",
           "-c", (out / "conda").resolve().as_uri()]
    for channel in channels:
        cmd += ["-c", channel]
    if variants:
        cmd += ["--variants", json.dumps(variants)]
    return cmd


def _empty_channel(path: Path) -> None:
    """A channel conda accepts before anything is built into it."""
    for subdir in ("noarch",):
        d = path / subdir
        d.mkdir(parents=True, exist_ok=True)
        if not (d / "repodata.json").exists():
            (d / "repodata.json").write_text(json.dumps({"info": {"subdir": subdir},
                                                         "packages": {}, "packages.conda": {}}))


def _select(root: Path, args: argparse.Namespace) -> List[Package]:
    packages = discover(WorkTree(root))
    if args.all:
        return packages
    if args.package:
        table = {}
        for p in packages:
            for alias in (p.name, p.dir, p.op):
                if alias:
                    table[alias] = p
        unknown = [n for n in args.package if n not in table]
        if unknown:
            raise RepoError(f"no such package: {', '.join(unknown)}")
        names = {table[n].name for n in args.package}
        return [p for p in packages if p.name in names]
    if args.range:
        base, head, merge_base = _split_range(args.range)
        return compute(changed_files(root, base, head, merge_base), packages).packages
    raise RepoError("say what to build: a git range, --package NAME or --all")


def _run(cmd: List[str], dry_run: bool) -> int:
    print("+ " + " ".join(cmd), flush=True)
    if dry_run:
        return 0
    return subprocess.run(cmd).returncode


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ci/build",
        description="Build the packages a change touches (or those named): wheels with pip "
                    "here, and conda packages with `conda build` where conda is installed.",
        epilog="examples:  ci/build origin/main...HEAD   ci/build --package reshape_and_cache "
               "--conda never   ci/build --all --dry-run")
    p.add_argument("range", nargs="?", help="git range BASE...HEAD: build what it touches")
    p.add_argument("--package", action="append", default=[], metavar="NAME",
                   help="package name, directory or op name (repeatable)")
    p.add_argument("--all", action="store_true", help="every package")
    p.add_argument("--out", default="dist", help="output directory (default: dist)")
    p.add_argument("--wheels", choices=("yes", "no"), default="yes", help="build wheels (default yes)")
    p.add_argument("--conda", choices=("auto", "always", "never"), default="auto",
                   help="conda build: where conda is found (auto, the default), required "
                        "(always) or not at all (never)")
    p.add_argument("--channel", action="append", default=[],
                   help="extra channel for conda build (repeatable), e.g. conda-forge")
    p.add_argument("--variant", action="append", default=[], metavar="KEY=VALUE",
                   help="restrict a conda_build_config key for conda build (repeatable)")
    p.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    p.add_argument("--root", default=str(ROOT), help="repository root (default: this checkout)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    root = Path(args.root).resolve()
    out = Path(args.out).resolve()
    try:
        packages = _select(root, args)
        variants: Dict[str, List[str]] = {}
        for item in args.variant:
            if "=" not in item:
                raise RepoError(f"--variant {item!r}: expected KEY=VALUE")
            key, value = item.split("=", 1)
            variants.setdefault(key, []).append(value)
    except RepoError as exc:
        print(f"ci/build: {exc}", file=sys.stderr)
        return 2
    if not packages:
        print("ci/build: nothing to build (the change touches no package)")
        return 0
    print(f"ci/build: {', '.join(f'{p.name} {p.version}' for p in packages)}")
    built: List[str] = []
    if args.wheels == "yes":
        for pkg in packages:
            if pkg.kind == "op" and not _common_importable():
                wheels = sorted((out / "wheels").glob("ascend_op_common-*.whl"))
                if not wheels and not args.dry_run:
                    print(f"ci/build: {pkg.name} needs ascend_ops.common importable in "
                          f"{sys.executable}: build common too, or "
                          f"`pip install --no-build-isolation ./common`", file=sys.stderr)
                    return 1
                wheel = str(wheels[-1]) if wheels else str(out / "wheels" / "ascend_op_common-*.whl")
                if _run([sys.executable, "-m", "pip", "install", "--no-deps", wheel], args.dry_run):
                    return 1
                importlib.invalidate_caches()
            if _run(wheel_command(root, pkg, out), args.dry_run):
                print(f"ci/build: wheel of {pkg.name} failed", file=sys.stderr)
                return 1
        built += [str(w) for w in sorted((out / "wheels").glob("*.whl"))]
    conda = shutil.which("conda")
    if args.conda == "always" and not conda:
        print("ci/build: --conda always, but conda is not on PATH", file=sys.stderr)
        return 2
    if args.conda != "never":
        if conda:
            if not args.dry_run:
                _empty_channel(out / "conda")
            if _run(conda_command(conda, root, packages, out, args.channel, variants), args.dry_run):
                print("ci/build: conda build failed", file=sys.stderr)
                return 1
            built += [str(p) for p in sorted((out / "conda").glob("*/*.conda"))
                      + sorted((out / "conda").glob("*/*.tar.bz2"))]
        else:
            print("ci/build: conda not found: no conda packages built here "
                  "(ci/recipe-check checks the recipes without conda)")
    for path in built:
        print(f"built: {path}")
    return 0


def _common_importable() -> bool:
    try:
        return importlib.util.find_spec("ascend_ops.common") is not None
    except ModuleNotFoundError:
        return False
