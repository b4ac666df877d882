"""Stand-ins: local conda packages for the dependencies this repository does not build.

No conda channel is reachable here, so python, numpy, pip, scikit-build-core, the compilers,
torch, ... cannot be solved for the real way. Each one a recipe needs gets a **stand-in**: a
conda package with the real name and this machine's version, build string ``aop_stand_in_*``,
in a channel of its own (``stand-ins/``). Its payload points at what this machine already has:

* a Python distribution (numpy, pip, torch, ...): one ``.pth`` file that puts a directory of
  symlinks on ``sys.path`` -- the distribution and its own requirements, taken from the running
  interpreter's site-packages, never the ``ascend_ops`` packages of this repository nor any
  ``.pth`` file (so no editable install leaks in). A test that forgets a run dependency fails,
  because that dependency's stand-in is not installed;
* a tool (cmake, ninja): ``bin/<tool>``, a wrapper that ``exec``s the installed binary;
* a compiler (``gxx_linux-64``, ``gcc_linux-64``): the conda-forge-style wrapper
  ``bin/x86_64-conda-linux-gnu-c++`` around the system compiler and an activation script that
  sets ``CC`` / ``CXX``, with the real compilers' ``run_exports`` (libstdcxx, libgcc);
* ``sysroot_linux-64`` (``stdlib('c')``): empty, versioned as this machine's glibc, with the
  ``__glibc`` run export;
* ``python``: empty; recipe-check turns every prefix into a venv of the running interpreter
  (the real package would ship the interpreter), and carries python's ``python_abi`` export.

Versions come from this machine (the compiler is g++ |gcc -dumpfullversion|, not the
``cxx_compiler_version`` of the variant config; the build stage says so).
"""

from __future__ import annotations

import importlib.metadata as md
import platform as _platform
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Set, Tuple

from .package import write_conda

__all__ = ["STAND_IN_TAG", "StandIn", "StandIns", "machine_versions"]

STAND_IN_TAG = "aop_stand_in"
#: Top-level names never taken into a stand-in: this repository's own packages and hooks.
_EXCLUDED_TOP = re.compile(r"^(ascend_ops|ascend_op_.*|_editable.*|__editable__.*|__pycache__|.*\.pth)$")
_TRIPLETS = {"linux-64": "x86_64-conda-linux-gnu", "linux-aarch64": "aarch64-conda-linux-gnu"}
_COMPILERS = {"gcc": ("gcc", "cc", "CC"), "gxx": ("g++", "c++", "CXX"),
              "gfortran": ("gfortran", "gfortran", "FC")}


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _gcc_version() -> str:
    out = subprocess.run(["gcc", "-dumpfullversion", "-dumpversion"], capture_output=True,
                         text=True)
    return out.stdout.strip() or "0"


def machine_versions() -> Dict[str, str]:
    """What this machine supplies: python, gcc and glibc versions."""
    libc = _platform.libc_ver()
    return {"python": _platform.python_version(), "gcc": _gcc_version(),
            "glibc": libc[1] if libc[0] == "glibc" else "2.17"}


@dataclass
class StandIn:
    """One stand-in package."""

    name: str
    version: str
    build: str
    summary: str
    files: Dict[str, Tuple[str, int]] = field(default_factory=dict)  # path -> (text, mode)
    run_exports: Dict[str, List[str]] = field(default_factory=dict)
    depends: List[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"name": self.name, "version": self.version, "build": self.build,
                "summary": self.summary}


class StandIns:
    """Makes the stand-ins a set of recipes needs and writes them as a channel.

    Parameters
    ----------
    root : Path
        Work directory: the channel goes to ``root/channel``, symlink views to ``root/site``.
    platform : str
        The conda subdir packages are built for here (``linux-64``).
    exclude : iterable of str
        Names built from this repository: never stood in for.
    distributions : mapping
        conda name -> Python distribution name where they differ (``pytorch: torch``).
    """

    def __init__(self, root: Path, platform: str, exclude: Iterable[str],
                 distributions: Optional[Mapping[str, str]] = None) -> None:
        self.root = Path(root)
        self.channel = self.root / "channel"
        self.site = self.root / "site"
        self.platform = platform
        self.exclude = set(exclude)
        self.distributions = dict(distributions or {})
        self.versions = machine_versions()
        self.made: Dict[str, StandIn] = {}
        self.missing: Dict[str, str] = {}
        py = sys.version_info
        self.site_packages = f"lib/python{py.major}.{py.minor}/site-packages"

    # --- the kinds of stand-ins -------------------------------------------------------------
    def _python(self) -> StandIn:
        v = self.versions["python"]
        mm = ".".join(v.split(".")[:2])
        tag = "cp" + mm.replace(".", "")
        return StandIn("python", v, f"{STAND_IN_TAG}_0",
                       f"stand-in for python: the interpreter {sys._base_executable} (each prefix "
                       f"is made a venv of it)",
                       run_exports={"weak": [f"python_abi {mm}.* *_{tag}"]})

    def _python_abi(self) -> StandIn:
        mm = ".".join(self.versions["python"].split(".")[:2])
        return StandIn("python_abi", mm, f"{STAND_IN_TAG}_cp{mm.replace('.', '')}",
                       "stand-in for python_abi: the running interpreter's ABI")

    def _compiler(self, name: str, kind: str) -> StandIn:
        gcc = self.versions["gcc"]
        tool, short, var = _COMPILERS[kind]
        triplet = _TRIPLETS[self.platform]
        system = shutil.which(tool) or f"/usr/bin/{tool}"
        wrapper = f"#!/bin/sh\nexec {system} \"$@\"\n"
        major = gcc.split(".")[0]
        exports = [f"libgcc >={major}"] + ([f"libstdcxx >={major}"] if kind == "gxx" else [])
        activate = (f"# {name} stand-in: the system {tool} through conda-forge's wrapper name\n"
                    f"export {var}=\"${{CONDA_PREFIX}}/bin/{triplet}-{short}\"\n"
                    f"export HOST={triplet}\nexport BUILD={triplet}\n")
        return StandIn(name, gcc, f"{STAND_IN_TAG}_0",
                       f"stand-in for {name}: the system compiler {system} ({gcc})",
                       files={f"bin/{triplet}-{short}": (wrapper, 0o755),
                              f"etc/conda/activate.d/activate-{name}.sh": (activate, 0o644)},
                       run_exports={"strong": exports})

    def _sysroot(self, name: str) -> StandIn:
        glibc = self.versions["glibc"]
        return StandIn(name, glibc, f"{STAND_IN_TAG}_0",
                       f"stand-in for {name}: this machine's C library (glibc {glibc}) and headers",
                       run_exports={"strong": [f"__glibc >={glibc},<3.0.a0"]})

    def _runtime_lib(self, name: str) -> StandIn:
        return StandIn(name, self.versions["gcc"], f"{STAND_IN_TAG}_0",
                       f"stand-in for {name}: the system's GCC {self.versions['gcc']} runtime")

    def _closure(self, dist_name: str) -> Tuple[List[md.Distribution], List[str]]:
        from packaging.requirements import Requirement
        seen: Dict[str, md.Distribution] = {}
        absent: List[str] = []
        stack = [dist_name]
        while stack:
            name = stack.pop()
            key = _canon(name)
            if key in seen or key in absent:
                continue
            try:
                dist = md.distribution(name)
            except md.PackageNotFoundError:
                absent.append(key)
                continue
            seen[key] = dist
            for text in dist.requires or []:
                req = Requirement(text)
                if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                    continue
                stack.append(req.name)
        return list(seen.values()), absent

    def _top_levels(self, dist: md.Distribution) -> Tuple[Path, Set[str]]:
        base = Path(str(dist.locate_file(""))).resolve()
        tops: Set[str] = set()
        for f in dist.files or []:
            parts = Path(str(f)).parts
            if not parts or parts[0] == "..":
                continue
            tops.add(parts[0])
        if not tops:
            info = getattr(dist, "_path", None)
            if info is not None:
                tops.add(Path(str(info)).name)
        return base, {t for t in tops if not _EXCLUDED_TOP.match(t)}

    def _python_dist(self, name: str, dist_name: str) -> Optional[StandIn]:
        try:
            dist = md.distribution(dist_name)
        except md.PackageNotFoundError:
            return None
        if _canon(dist.metadata["Name"] or "").startswith("ascend-op"):
            return None
        dists, absent = self._closure(dist_name)
        view = self.site / name
        if view.exists():
            shutil.rmtree(view)
        view.mkdir(parents=True)
        for d in dists:
            base, tops = self._top_levels(d)
            for top in sorted(tops):
                src = base / top
                if src.exists() and not (view / top).exists():
                    (view / top).symlink_to(src)
        version = str(dist.version).split("+")[0]
        files: Dict[str, Tuple[str, int]] = {
            f"{self.site_packages}/_aop_stand_in_{name}.pth": (f"{view}\n", 0o644)}
        for script in self._console_scripts(dist, name):
            files[f"bin/{script[0]}"] = (f"#!/bin/sh\nexec {script[1]} \"$@\"\n", 0o755)
        note = f"; absent here: {', '.join(absent)}" if absent else ""
        return StandIn(name, version, f"{STAND_IN_TAG}_0",
                       f"stand-in for {name}: Python distribution {dist.metadata['Name']} "
                       f"{dist.version} and its {len(dists) - 1} requirements from "
                       f"{Path(str(dist.locate_file(''))).resolve()}{note}", files=files)

    def _console_scripts(self, dist: md.Distribution, name: str) -> List[Tuple[str, str]]:
        """``bin/`` wrappers: (script name, shell command) for the distribution's console scripts.

        A tool (cmake, ninja) execs the installed executable (a build prefix has no Python);
        any other script runs its entry point with the prefix's own ``python``.
        """
        out = []
        scripts = Path(sysconfig.get_path("scripts"))
        for ep in dist.entry_points:
            if ep.group != "console_scripts":
                continue
            if name in ("cmake", "ninja"):
                if ep.name != name:
                    continue
                target = scripts / ep.name
                found = str(target) if target.exists() else shutil.which(ep.name)
                if found:
                    out.append((ep.name, found))
                continue
            module, _, attr = ep.value.partition(":")
            call = f"from {module} import {attr.split('.')[0]} as f; " if attr else f"import {module} as f; "
            target_attr = ".".join(["f"] + attr.split(".")[1:]) if attr else "f"
            code = f"import sys; {call}sys.exit({target_attr}())"
            out.append((ep.name, f'"$(dirname "$0")/python" -c \'{code}\''))
        return out

    def make(self, name: str) -> Optional[StandIn]:
        """The stand-in for conda package ``name``, or None if this machine has nothing for it."""
        if name in self.made:
            return self.made[name]
        if name in self.exclude or name.startswith("__"):
            return None
        m = re.fullmatch(r"(gcc|gxx|gfortran)_(linux-64|linux-aarch64)", name)
        if m:
            if m.group(2) != self.platform:
                self.missing[name] = f"no cross compiler to {m.group(2)} here"
                return None
            standin: Optional[StandIn] = self._compiler(name, m.group(1))
        elif re.fullmatch(r"sysroot_linux-(64|aarch64)", name):
            standin = self._sysroot(name)
        elif name == "python":
            standin = self._python()
        elif name == "python_abi":
            standin = self._python_abi()
        elif name in ("libgcc", "libstdcxx", "libgcc-ng", "libstdcxx-ng", "libgomp"):
            standin = self._runtime_lib(name)
        else:
            standin = self._python_dist(name, self.distributions.get(name, name))
        if standin is None:
            self.missing.setdefault(name, "no Python distribution or system tool of that name here")
            return None
        self.made[name] = standin
        for spec in standin.run_exports.get("weak", []) + standin.run_exports.get("strong", []):
            dep = spec.split()[0]
            if not dep.startswith("__"):
                self.make(dep)
        return standin

    def make_all(self, names: Iterable[str]) -> None:
        for name in sorted(set(names)):
            self.make(name)

    def write_channel(self) -> Path:
        """Write every stand-in made so far as packages of ``root/channel``; return it."""
        subdir = self.channel / self.platform
        subdir.mkdir(parents=True, exist_ok=True)
        (self.channel / "noarch").mkdir(parents=True, exist_ok=True)
        for s in self.made.values():
            stage = self.root / "stage" / s.name
            if stage.exists():
                shutil.rmtree(stage)
            stage.mkdir(parents=True)
            for rel, (text, mode) in s.files.items():
                path = stage / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
                path.chmod(mode)
            index = {"name": s.name, "version": s.version, "build": s.build, "build_number": 0,
                     "depends": s.depends, "subdir": self.platform, "platform": "linux",
                     "arch": "x86_64" if self.platform == "linux-64" else "aarch64",
                     "license": "stand-in"}
            write_conda(stage, list(s.files), index, subdir,
                        about={"summary": s.summary, "extra": {"aop_stand_in": True}},
                        run_exports=s.run_exports or None)
        return self.channel
