"""``ci/build``: build the touched packages -- wheels, and conda packages with rattler-build.

Wheels: ``python -m pip wheel <pkg> --no-deps --no-build-isolation`` for each package, common
first, into ``<out>/wheels`` (the running Python must have the build requirements; an op also
needs ``ascend_ops.common`` importable, which a common wheel built in the same run provides).

Conda packages (``--conda yes``): each package's v1 recipe built with every variant of
``recipes/variants.yaml`` (``--variant KEY=VALUE`` restricts one key), its tests run, into
``<out>/conda``, which is also the first channel of the build so an op finds the common built
just before it; the other channels are ``--channel`` (the release runners: conda-forge, mindspore
and ours). ``--builder conda-build`` (the release workflow) runs the ``conda-build`` command on
PATH, which hands the recipe to rattler-build; ``--builder rattler-build`` (the default) calls
py-rattler-build directly (:func:`aop_ci.recipe.rattler.build`, the call ``ci/recipe-check``
makes too). The recipes are the same. ``--dry-run`` prints what would be built.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from .changed import _split_range, changed_files, compute
from .repo import ROOT, Package, RepoError, WorkTree, discover

__all__ = ["wheel_command", "main"]


def wheel_command(root: Path, pkg: Package, out: Path, python: str = sys.executable) -> List[str]:
    # A release wheel never carries the simulated Ascend runtime: an op's AOP_WITH_NPU_SIM would
    # otherwise follow the common it builds against, which in CI is ./dev's (built with it).
    return [python, "-m", "pip", "wheel", str(root / pkg.dir), "--no-deps",
            "--no-build-isolation", "--wheel-dir", str(out / "wheels"),
            "--config-settings=cmake.define.AOP_WITH_NPU_SIM=OFF"]


def conda_build_command(root: Path, pkg: Package, conda_out: Path, channels: Sequence[str],
                        variants: Dict[str, List[str]]) -> List[str]:
    """``conda-build`` of one recipe with the channel-wide variants (``variants`` restricts keys,
    through a variants file of their own, which conda-build stacks after the first)."""
    cmd = ["conda-build", str(root / pkg.recipe_dir), "-m", str(root / "recipes" / "variants.yaml")]
    if variants:
        conda_out.mkdir(parents=True, exist_ok=True)
        restrict = conda_out.parent / "variant-restrict.yaml"
        restrict.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in variants.items()))
        cmd += ["-m", str(restrict)]
    cmd += ["--override-channels", "-c", conda_out.resolve().as_uri()]
    for channel in channels:
        cmd += ["-c", channel]
    return cmd + ["--output-folder", str(conda_out)]


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
        description="Build the packages a change touches (or those named): wheels with pip, "
                    "and conda packages with rattler-build (py-rattler-build) from their v1 "
                    "recipes and recipes/variants.yaml.",
        epilog="examples:  ci/build origin/main...HEAD   ci/build --package my_op "
               "--wheels no --conda yes --channel conda-forge   ci/build --all --dry-run")
    p.add_argument("range", nargs="?", help="git range BASE...HEAD: build what it touches")
    p.add_argument("--package", action="append", default=[], metavar="NAME",
                   help="package name, directory or op name (repeatable)")
    p.add_argument("--all", action="store_true", help="every package")
    p.add_argument("--out", default="dist", help="output directory (default: dist)")
    p.add_argument("--wheels", choices=("yes", "no"), default="yes", help="build wheels (default yes)")
    p.add_argument("--conda", choices=("yes", "no"), default="no",
                   help="conda packages with rattler-build, tests included (default no)")
    p.add_argument("--channel", action="append", default=[],
                   help="channel the conda build solves from (repeatable), e.g. conda-forge")
    p.add_argument("--variant", action="append", default=[], metavar="KEY=VALUE",
                   help="build only this value of a recipes/variants.yaml key (repeatable)")
    p.add_argument("--builder", choices=("rattler-build", "conda-build"), default="rattler-build",
                   help="conda packages by py-rattler-build (default) or by the conda-build command "
                        "on PATH (the release workflow); the same recipes")
    p.add_argument("--env-isolation", choices=("conda-build", "strict"), default="conda-build",
                   help="rattler-build's isolation of the build environment: conda-build's "
                        "(the default: CANN's environment reaches the build on Ascend runners) "
                        "or strict (ci/recipe-check's)")
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
    if args.conda == "yes":
        conda_out = out / "conda"
        for pkg in packages:
            if args.builder == "conda-build":
                if _run(conda_build_command(root, pkg, conda_out, args.channel, variants), args.dry_run):
                    print(f"ci/build: conda-build of {pkg.name} failed", file=sys.stderr)
                    return 1
                continue
            print(f"+ rattler-build: {root / pkg.recipe_dir} -m {root / 'recipes/variants.yaml'} "
                  f"{variants or ''} -> {conda_out} (channels: {conda_out}, "
                  f"{', '.join(args.channel) or 'none'})", flush=True)
            if args.dry_run:
                continue
            from .recipe import rattler
            try:
                rattler.build(root, root / pkg.recipe_dir, conda_out, args.channel,
                              overrides=variants, echo=True, isolation=args.env_isolation)
            except Exception as exc:  # rattler-build's error: a build or a test failed
                print(f"ci/build: conda build of {pkg.name} failed: {exc}", file=sys.stderr)
                return 1
        built += [str(p) for p in sorted(conda_out.glob("*/*.conda"))]
    for path in built:
        print(f"built: {path}")
    return 0


def _common_importable() -> bool:
    try:
        return importlib.util.find_spec("ascend_ops.common") is not None
    except ModuleNotFoundError:
        return False
