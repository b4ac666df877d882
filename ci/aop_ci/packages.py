"""``ci/packages``: every package built by **conda-build** into a local channel, then each op
installed the way a user installs it -- ``conda install ascend-op-<op>`` in a fresh environment
whose channels are that local channel -- and checked there.

1. ``stand-ins``: the channel of :mod:`.recipe.standins` (this machine's python, numpy, torch,
   compilers, ... as conda packages: no conda channel is reachable here).
2. ``build``: ``conda-build <pkg>/recipe -m recipes/variants.yaml -m <machine variants>`` for common,
   the devkit, every op and the integration package (conda-build hands the v1 recipes to
   rattler-build and runs their tests), the CPU variant (``framework=none``, ``cann=none``), then
   each op's ``framework=torch`` variant.
3. ``install``: per op and variant, ``python -m conda create -p <prefix> python`` then ``python -m
   conda install -p <prefix> ascend-op-<op>`` (the torch variant: ``"ascend-op-<op>=*=torch_*"
   pytorch``) with a condarc listing the local channels, as a user configures them; the op is
   imported and ``ascend-ops check <package>`` (every op it ships) run there. Last, ``conda install ascend-ops`` (every op)
   and ``ascend-ops check``.

With ``--channel-from DIR`` step 2 is skipped: the packages come from the channel of a
``ci/recipe-check`` work directory that already built every package and variant from the same
recipes (``.ci/run`` passes the one ``./dev test`` has just made), and step 3 runs on it with this
run's own stand-ins (a stand-in points into the site-packages of the interpreter that made it).

Prints a table (package, variant, build time, size, install time, check) and exits 1 if anything
failed. conda-build comes from ``--conda-build`` or PATH; ``./dev packages`` gives it the tools
venv it makes from ``../shared/tools/conda-wheels`` where no conda-build is installed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from .recipe import standins
from .repo import ROOT, Package, RepoError, WorkTree, discover

__all__ = ["Row", "main", "build_parser", "conda_python"]

VARIANTS = Path("recipes") / "variants.yaml"


@dataclass
class Row:
    """One line of the table."""

    package: str
    variant: str
    build_s: Optional[float] = None
    size_kib: Optional[int] = None
    install_s: Optional[float] = None
    check: str = "-"

    @property
    def ok(self) -> bool:
        return self.check in ("ok", "-")


def conda_python(conda_build: Path) -> Path:
    """The interpreter conda-build runs under (its script's neighbour, else its shebang's): the one
    ``python -m conda`` works with (the pip-installed ``conda`` script refuses most commands)."""
    neighbour = conda_build.parent / "python"
    if neighbour.exists():
        return neighbour
    first = conda_build.read_text(errors="replace").splitlines()[0]
    return Path(first[2:].strip().split()[0])


def _run(cmd: Sequence[object], log: Path, env: Dict[str, str], timeout: float = 3600) -> float:
    """Run ``cmd`` with its output appended to ``log``; return the seconds it took.

    Raises
    ------
    RuntimeError
        If it fails; the message ends with the log's last lines.
    """
    t0 = time.monotonic()
    with open(log, "a", encoding="utf-8") as out:
        out.write("\n+ " + " ".join(str(c) for c in cmd) + "\n")
        out.flush()
        proc = subprocess.run([str(c) for c in cmd], stdout=out, stderr=subprocess.STDOUT, env=env,
                              timeout=timeout)
    if proc.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
        raise RuntimeError(f"{cmd[0]} ... exited with {proc.returncode} (log {log}):\n{tail}")
    return time.monotonic() - t0


def _condarc(workdir: Path, channels: Sequence[Path]) -> Path:
    """A condarc (the file must be named ``condarc``) with our channels only and the classic solver
    (libmamba is not installed beside the conda wheel)."""
    path = workdir / "condarc"
    lines = ["channels:", *[f"  - {c.resolve().as_uri()}" for c in channels], "solver: classic",
             "always_yes: true", "auto_update_conda: false", "notify_outdated_conda: false"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _variant_file(workdir: Path, name: str, values: Dict[str, List[str]]) -> Path:
    path = workdir / f"variant-{name}.yaml"
    path.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in values.items()), encoding="utf-8")
    return path


def _built(channel: Path) -> Dict[str, Path]:
    return {p.name: p for p in channel.glob("*/*.conda")}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ci/packages",
        description="Build every package with conda-build into a local channel (stand-ins for what "
                    "no offline channel has), then `conda install` each op alone into a fresh "
                    "environment from that channel and run `ascend-ops check <package>` there.")
    p.add_argument("--conda-build", metavar="PATH", help="the conda-build script (default: on PATH)")
    p.add_argument("--workdir", default="build/packages", help="channels, environments, logs")
    p.add_argument("--no-torch", action="store_true", help="skip the ops' framework=torch variant")
    p.add_argument("--channel-from", metavar="DIR",
                   help="a ci/recipe-check work directory whose channel already holds every package and "
                        "variant: install and check from it instead of building "
                        "them again (.ci/run: ./dev test's recipe-check has just built them with "
                        "rattler-build, the builder conda-build hands these v1 recipes to)")
    p.add_argument("--json", metavar="FILE", help="write the rows as JSON")
    p.add_argument("--root", default=str(ROOT), help="repository root (default: this checkout)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    root = Path(args.root).resolve()
    found = args.conda_build or shutil.which("conda-build")
    if not found:
        print("ci/packages: no conda-build (give --conda-build or put it on PATH)", file=sys.stderr)
        return 2
    conda_build = Path(found).resolve()
    python = conda_python(conda_build)
    try:
        packages = discover(WorkTree(root))
    except RepoError as exc:
        print(f"ci/packages: {exc}", file=sys.stderr)
        return 2
    workdir = Path(args.workdir).resolve()
    if workdir.exists():
        shutil.rmtree(workdir)
    logs = workdir / "logs"
    logs.mkdir(parents=True)
    channel, stand_ins = workdir / "channel", workdir / "stand-ins"
    if args.channel_from:
        channel = Path(args.channel_from).resolve() / "channel"
        if not channel.is_dir():
            print(f"ci/packages: {channel.parent} has no channel/ (not a ci/recipe-check work directory)",
                  file=sys.stderr)
            return 2
    # the stand-ins are always this run's own: they point into this interpreter's site-packages
    machine = standins.compiler_overrides(standins.make_channel(workdir, root))
    condarc = _condarc(workdir, [channel, stand_ins])
    # conda-build's own channels come from the command line; the condarc is the users' (installs)
    env = dict(os.environ, CONDARC=str(condarc), CONDA_PKGS_DIRS=str(workdir / "pkgs"),
               PATH=f"{conda_build.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    if args.channel_from:
        print(f"conda (python {python}); packages from {channel}, stand-ins: {stand_ins}", flush=True)
    else:
        print(f"conda-build {conda_build} (python {python}); stand-ins: {stand_ins}; "
              f"this machine's toolchain replaces {machine}", flush=True)

    rows: List[Row] = []
    variants = [("none", {"framework": ["none"], "cann": ["none"]})]
    if not args.no_torch:
        variants.append(("torch", {"framework": ["torch"], "cann": ["none"]}))
    for variant, values in variants:
        vfile = _variant_file(workdir, variant, {**machine, **values})
        for pkg in packages:
            if variant != "none" and pkg.kind != "op":
                continue  # one build of common, the devkit and the integration package
            if args.channel_from:
                rows.append(_reused(channel, pkg, variant))
            else:
                rows.append(_build(conda_build, root, pkg, variant, vfile, channel, workdir, logs, env))
    for variant, _ in variants:
        for pkg in (p for p in packages if p.kind == "op"):
            row = next(r for r in rows if r.package == pkg.name and r.variant == variant)
            if row.check == "ok":
                _install(python, pkg, variant, row, workdir, logs, env)
    integration = next((p for p in packages if p.kind == "integration"), None)
    if integration is not None:
        row = next(r for r in rows if r.package == integration.name)
        if row.check == "ok":
            _install(python, integration, "none", row, workdir, logs, env)

    _print_table(rows)
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in rows], indent=2))
    failed = [r for r in rows if not r.ok]
    print(f"ci/packages: {'ok' if not failed else 'FAILED: ' + ', '.join(f'{r.package} ({r.variant})' for r in failed)}")
    return 1 if failed else 0


def _build(conda_build: Path, root: Path, pkg: Package, variant: str, vfile: Path, channel: Path,
           workdir: Path, logs: Path, env: Dict[str, str]) -> Row:
    row = Row(pkg.name, variant)
    before = _built(channel)
    log = logs / f"build-{pkg.dir.replace('/', '_')}-{variant}.log"
    print(f"== conda-build {pkg.dir} ({variant})", flush=True)
    try:
        row.build_s = round(_run([conda_build, root / pkg.recipe_dir, "-m", root / VARIANTS, "-m", vfile,
                                  "--override-channels", "-c", channel.as_uri(), "-c",
                                  (workdir / "stand-ins").as_uri(), "--output-folder", channel], log, env), 1)
    except RuntimeError as exc:
        row.check = "build failed"
        print(f"   {exc}", flush=True)
        return row
    new = [p for name, p in _built(channel).items() if name not in before]
    row.size_kib = round(sum(p.stat().st_size for p in new) / 1024)
    row.check = "ok" if new else "built nothing"
    print(f"   {', '.join(p.name for p in new)} ({row.build_s} s)", flush=True)
    return row


def _reused(channel: Path, pkg: Package, variant: str) -> Row:
    """The row of a package another run built into `channel`: its variant's file there (an op's
    build string starts with the variant: ``none_cpu_py311h..``), or "not in channel"."""
    row = Row(pkg.name, variant)
    found = [p for p in channel.glob("*/*.conda")
             if p.name.rsplit("-", 2)[0] == pkg.name and p.name.rsplit("-", 2)[1] == pkg.version
             and (pkg.kind != "op" or p.name.rsplit("-", 2)[2].startswith(f"{variant}_"))]
    row.size_kib = round(sum(p.stat().st_size for p in found) / 1024) if found else None
    row.check = "ok" if found else "not in channel"
    print(f"== {pkg.dir} ({variant}): {', '.join(p.name for p in found) or 'not in ' + str(channel)}", flush=True)
    return row


def _install(python: Path, pkg: Package, variant: str, row: Row, workdir: Path, logs: Path,
             env: Dict[str, str]) -> None:
    """The user's commands in a fresh environment, then the import and ``ascend-ops check``."""
    prefix = workdir / "envs" / f"{pkg.dir.replace('/', '_')}-{variant}"
    log = logs / f"install-{prefix.name}.log"
    specs = [pkg.name] if variant == "none" else [f"{pkg.name}=*={variant}_*", "pytorch"]
    conda = [python, "-m", "conda"]
    try:
        _run([*conda, "create", "-q", "-p", prefix, "python"], log, env)
        row.install_s = round(_run([*conda, "install", "-q", "-p", prefix, *specs], log, env), 1)
        module = f"ascend_ops.{pkg.op}" if pkg.op else "ascend_ops.compat"
        _run([prefix / "bin" / "python", "-c", f"import {module}"], log, env)
        check = [str(prefix / "bin" / "ascend-ops"), "check", *([pkg.name] if pkg.op else [])]
        proc = subprocess.run(check, capture_output=True, text=True, env=env, timeout=1800)
        with open(log, "a", encoding="utf-8") as out:
            out.write("\n+ " + " ".join(check) + "\n" + proc.stdout + proc.stderr)
        if proc.returncode != 0:
            raise RuntimeError(f"ascend-ops check failed:\n{proc.stdout[-2000:]}{proc.stderr[-1000:]}")
        if variant == "torch" and not re.search(r"cpu\s+torch eager\s+passed", proc.stdout):
            raise RuntimeError(f"the torch variant ran no torch eager case:\n{proc.stdout[-2000:]}")
        row.check = "ok"
    except RuntimeError as exc:
        row.check = "install/check failed"
        print(f"   {pkg.name} ({variant}): {exc}", flush=True)


def _print_table(rows: Sequence[Row]) -> None:
    head = ("package", "variant", "build s", "size KiB", "install s", "recipe tests; conda install + ascend-ops check")
    cells = [head] + [(r.package, r.variant, _cell(r.build_s), _cell(r.size_kib), _cell(r.install_s), r.check)
                      for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(head))]
    for line in cells:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip())


def _cell(value: object) -> str:
    return "-" if value is None else str(value)
