"""The channel of stand-ins: ``ci/standins/recipe.yaml`` built by rattler-build with this
machine's facts (versions and paths) as extra context.

A Python distribution's stand-in is a ``.pth`` into a *view*: a directory of symlinks to the
distribution and its own requirements in the running interpreter's site-packages -- never this
repository's packages, an editable-install hook or a ``.pth`` -- so a test environment sees what
the solve installed and nothing else.
"""

from __future__ import annotations

import importlib.metadata as md
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

from . import rattler

__all__ = ["RECIPE", "DISTRIBUTIONS", "machine_context", "make_channel", "compiler_overrides"]

RECIPE = Path(__file__).resolve().parents[2] / "standins"
#: conda name -> Python distribution of this machine.
DISTRIBUTIONS = {"pip": "pip", "numpy": "numpy", "scikit-build-core": "scikit-build-core",
                 "pybind11": "pybind11", "pytorch": "torch", "mindspore": "mindspore",
                 # the run requirements of ascend-op-devkit
                 "hypothesis": "hypothesis", "pytest": "pytest", "psutil": "psutil", "pyyaml": "PyYAML",
                 "ml_dtypes": "ml_dtypes"}
_EXCLUDED = re.compile(r"^(ascend_ops|ascend_op_.*|_editable.*|__editable__.*|__pycache__|.*\.pth)$")


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _closure(name: str) -> List[md.Distribution]:
    """The distribution and, recursively, its unconditional requirements that are installed."""
    from packaging.requirements import Requirement
    seen: Dict[str, md.Distribution] = {}
    stack = [name]
    while stack:
        key = _canon(stack.pop())
        if key in seen:
            continue
        try:
            dist = md.distribution(key)
        except md.PackageNotFoundError:
            continue
        seen[key] = dist
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                stack.append(req.name)
    return list(seen.values())


def _view(dist_name: str, dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for dist in _closure(dist_name):
        base = Path(str(dist.locate_file(""))).resolve()
        for top in sorted({Path(str(f)).parts[0] for f in dist.files or []} - {".."}):
            if not _EXCLUDED.match(top) and (base / top).exists() and not (dest / top).exists():
                (dest / top).symlink_to(base / top)


def _gcc_version() -> str:
    out = subprocess.run(["gcc", "-dumpfullversion"], capture_output=True, text=True)
    return out.stdout.strip() or "0"


def machine_context(views: Path) -> Dict[str, str]:
    """This machine's facts, as the stand-in recipe's extra context; makes the views."""
    import cmake
    import ninja
    exe = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
    ctx = {"python_version": platform.python_version(),
           "python_mm": f"{sys.version_info.major}.{sys.version_info.minor}",
           "python_executable": str(exe), "views": str(views),
           "cmake_path": str(Path(cmake.CMAKE_BIN_DIR) / "cmake"), "cmake_version": md.version("cmake"),
           "ninja_path": str(Path(ninja.BIN_DIR) / "ninja"), "ninja_version": md.version("ninja"),
           "gcc_path": shutil.which("gcc") or "/usr/bin/gcc",
           "gxx_path": shutil.which("g++") or "/usr/bin/g++", "gcc_version": _gcc_version(),
           "glibc_version": platform.libc_ver()[1] or "2.17"}
    for conda_name, dist in DISTRIBUTIONS.items():
        try:
            version = md.version(dist).split("+")[0]
        except md.PackageNotFoundError:
            version = "0.0.0.absent"
        ctx[f"{conda_name.replace('-', '_')}_version"] = version
        _view(dist, views / conda_name)
    return ctx


def compiler_overrides(ctx: Dict[str, str]) -> Dict[str, List[str]]:
    """The variant keys this machine's compilers and C library replace (said in the report)."""
    return {"c_compiler_version": [ctx["gcc_version"].split(".")[0]],
            "cxx_compiler_version": [ctx["gcc_version"].split(".")[0]],
            "c_stdlib_version": [".".join(ctx["glibc_version"].split(".")[:2])],
            "python": [ctx["python_mm"]]}


def make_channel(workdir: Path, root: Path) -> Dict[str, str]:
    """Build the stand-ins into ``workdir/stand-ins``; return the machine context used."""
    ctx = machine_context(workdir / "views")
    channel = workdir / "stand-ins"
    if channel.exists():
        shutil.rmtree(channel)
    rattler.build(root, RECIPE, channel, [], test=False, extra_context=ctx, variants=False,
                  log=workdir / "stand-ins.log")
    for bld in (channel / "bld", channel / "src_cache", channel / "build_cache"):
        shutil.rmtree(bld, ignore_errors=True)
    return ctx
