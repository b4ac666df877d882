"""Lint of rendered recipes: conda-forge conventions and this repository's packaging rules.

The rules are ours (conda-smithy is not run); each finding names its rule. ``error`` fails
the stage, ``warning`` is printed. Rules that look at one rendered variant run for every
variant and platform; a finding is reported once.

=====================  ======================================================================
rule                   what it asks
=====================  ======================================================================
sections               only known sections and keys (a typo such as ``requirement:`` is an error)
name                   package/name is lower case and equals the pyproject's project name
version                package/version is text from the package's single version source,
                       written as Jinja (never a literal)
build-number           build/number is a non-negative integer
source                 ``path:`` or ``url:`` with ``sha256:``
linux-only             ``skip: true  # [not linux]``
pip-install            the build script runs ``$PYTHON -m pip install . --no-deps
                       --no-build-isolation``; python and pip are host requirements
compilers              a CMake project needs ``{{ compiler('cxx') }}`` (and ``'c'`` when the
                       project enables C) plus ``{{ stdlib('c') }}``; it is not ``noarch``
python-run             python in host means python in run
pyproject-build        every pyproject build requirement is a host (or build) requirement
pyproject-run          run == the pyproject's dependencies (ascend-op-common excepted: it comes
                       from run_exports), same version bounds
common-run-exports     common pins itself with ``max_pin="x.x"`` and its C ABI build string
op-common              an op has ``ascend-op-common`` in host and not in run
frameworks             a framework in host is pinned exactly (``==``) and repeated in
                       run_constrained and test/requires, never in run
tests                  the test section imports the package, runs ``pip check`` (with pip in
                       test requires) and the ``ascend-ops`` command (``check <op>`` for an op)
about                  license and summary
=====================  ======================================================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from ..repo import Package
from .render import Rendered
from .spec import pep440_to_conda, split_spec

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = ["Finding", "FRAMEWORK_PACKAGES", "COMMON_NAME", "lint"]

ERROR, WARNING = "error", "warning"
COMMON_NAME = "ascend-op-common"
#: conda names of the frameworks an op may carry an adapter for.
FRAMEWORK_PACKAGES = ("pytorch", "mindspore")
#: Build tools that pyproject lists as build requirements but conda puts in ``build``.
BUILD_TOOLS = ("cmake", "ninja")

_KNOWN = {
    None: {"package", "source", "build", "requirements", "test", "about", "extra", "outputs", "app"},
    "package": {"name", "version"},
    "source": {"path", "url", "sha256", "md5", "git_url", "git_rev", "patches", "folder",
               "fn", "path_via_symlink"},
    "build": {"number", "string", "skip", "script", "script_env", "run_exports", "noarch",
              "entry_points", "ignore_run_exports", "ignore_run_exports_from", "rpaths",
              "binary_relocation", "has_prefix_files", "missing_dso_whitelist", "track_features",
              "merge_build_host", "always_include_files", "preserve_egg_dir", "detect_binary_files_with_prefix"},
    "requirements": {"build", "host", "run", "run_constrained"},
    "test": {"imports", "commands", "requires", "source_files", "files", "script"},
    "about": {"home", "license", "license_file", "license_family", "license_url", "summary",
              "description", "doc_url", "dev_url", "doc_source_url"},
}


@dataclass(frozen=True)
class Finding:
    level: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.level}: [{self.rule}] {self.message}"


class _Collector:
    def __init__(self) -> None:
        self.items: List[Finding] = []

    def add(self, level: str, rule: str, message: str) -> None:
        f = Finding(level, rule, message)
        if f not in self.items:
            self.items.append(f)

    def error(self, rule: str, message: str) -> None:
        self.add(ERROR, rule, message)

    def warning(self, rule: str, message: str) -> None:
        self.add(WARNING, rule, message)


def _names(reqs: Sequence[str]) -> Dict[str, Optional[str]]:
    out: Dict[str, Optional[str]] = {}
    for r in reqs:
        name, version, _ = split_spec(r)
        out[name] = version
    return out


def _bounds(version: Optional[str]) -> set:
    return set((version or "").replace(" ", "").split(",")) - {""}


def _script_text(r: Rendered) -> str:
    script = r.build.get("script")
    if script:
        return "\n".join(script) if isinstance(script, list) else str(script)
    build_sh = r.recipe_dir / "build.sh"
    return build_sh.read_text(encoding="utf-8") if build_sh.is_file() else ""


def _cmake_languages(source_dir: Optional[Path]) -> Optional[set]:
    """Languages the package's CMake project enables, None if it is not a CMake project."""
    if source_dir is None or not (source_dir / "CMakeLists.txt").is_file():
        return None
    text = (source_dir / "CMakeLists.txt").read_text(encoding="utf-8")
    m = re.search(r"project\s*\(([^)]*)\)", text, re.IGNORECASE)
    langs = {"c", "cxx"}
    if m and "LANGUAGES" in m.group(1):
        words = m.group(1).split("LANGUAGES", 1)[1].split()
        langs = {w.lower() for w in words if w.isupper() or w in ("C", "CXX")}
        langs = {w for w in langs if w in ("c", "cxx", "none", "fortran")}
    return langs


def _pyproject(source_dir: Optional[Path]) -> dict:
    if source_dir is None or not (source_dir / "pyproject.toml").is_file():
        return {}
    return tomllib.loads((source_dir / "pyproject.toml").read_text(encoding="utf-8"))


def _lint_variant(r: Rendered, pkg: Optional[Package], raw: str, c: _Collector) -> None:
    meta = r.meta
    for section, keys in _KNOWN.items():
        data = meta if section is None else meta.get(section)
        if section is not None and data is not None and not isinstance(data, dict):
            c.error("sections", f"{section}: should be a mapping")
            continue
        for key in (data or {}):
            if key not in keys:
                where = f"{section}/{key}" if section else key
                c.error("sections", f"unknown key {where!r} (known: {', '.join(sorted(keys))})")

    # package
    if r.name != r.name.lower() or not re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", r.name):
        c.error("name", f"package/name {r.name!r} must be lower case [a-z0-9_.-]")
    if pkg is not None and r.name != pkg.name:
        c.error("name", f"package/name {r.name!r} differs from pyproject's {pkg.name!r}")
    version = (meta.get("package") or {}).get("version")
    if not isinstance(version, str):
        c.error("version", f"package/version {version!r} is not text (quote it)")
    if pkg is not None and r.version != pkg.version:
        c.error("version", f"package/version {r.version} differs from {pkg.version} in "
                           f"{pkg.version_file}, the package's single version source")
    if not re.search(r"^\s+version:\s*\{\{", raw, re.MULTILINE):
        c.error("version", "package/version must be a Jinja expression read from the version "
                           "source (load_file_regex), not a literal")

    # build
    build = r.build
    number = build.get("number")
    if not isinstance(number, int) or isinstance(number, bool) or number < 0:
        c.error("build-number", f"build/number {number!r} must be a non-negative integer")
    source = meta.get("source") or {}
    if isinstance(source, dict) and not (source.get("path") or (source.get("url") and source.get("sha256"))):
        c.error("source", "source needs path: or url: with sha256:")
    if not re.search(r"^\s+skip:\s*(true|True)\s*#\s*\[\s*not linux\s*\]", raw, re.MULTILINE):
        c.error("linux-only", "build needs `skip: true  # [not linux]` (Ascend packages are Linux-only)")

    host, build_reqs, run = (_names(r.requirements(s)) for s in ("host", "build", "run"))
    constrained = _names(r.requirements("run_constrained"))
    script = _script_text(r)
    if not script.strip():
        c.error("pip-install", "no build script (build.sh or build/script)")
    elif "pip install" in script:
        for flag in ("--no-deps", "--no-build-isolation"):
            if flag not in script:
                c.error("pip-install", f"`pip install` in the build script needs {flag}")
        if not re.search(r"(\$PYTHON|\$\{PYTHON\}|\{\{\s*PYTHON\s*\}\})\"?\s+-m\s+pip\s+install", script):
            c.error("pip-install", "call pip as `$PYTHON -m pip install` (the host prefix's Python)")
        for need in ("python", "pip"):
            if need not in host:
                c.error("pip-install", f"host requirements need {need} for a pip build")

    langs = _cmake_languages(r.source_dir)
    if langs is not None and langs != {"none"}:
        for lang, prefix in (("cxx", "gxx_"), ("c", "gcc_")):
            if lang in langs and not any(n.startswith(prefix) for n in build_reqs):
                c.error("compilers", f"the CMake project enables {lang.upper()}: build "
                                     f"requirements need {{{{ compiler('{lang}') }}}}")
        if not any(n.startswith("sysroot_") for n in build_reqs):
            c.error("compilers", "a compiled package needs {{ stdlib('c') }} in build requirements")
        if build.get("noarch"):
            c.error("compilers", "a compiled package cannot be noarch")
    if "python" in host and "python" not in run:
        c.error("python-run", "python is a host requirement, so it must be a run requirement")

    pyproject = _pyproject(r.source_dir)
    for req in (pyproject.get("build-system") or {}).get("requires", []):
        name, _ = pep440_to_conda(req)
        if name not in host and name not in build_reqs:
            c.error("pyproject-build", f"pyproject build requirement {req!r} is missing from host")
    deps = {}
    for req in (pyproject.get("project") or {}).get("dependencies", []):
        name, spec = pep440_to_conda(req)
        deps[name] = spec
    if pyproject:
        for name, spec in deps.items():
            if name == COMMON_NAME:
                continue
            if name not in run:
                c.error("pyproject-run", f"pyproject dependency {name} {spec or ''} is not a run "
                                         f"requirement")
            elif _bounds(run[name]) != _bounds(spec):
                c.error("pyproject-run", f"run requirement {name} {run[name] or ''} differs from "
                                         f"the pyproject's {name} {spec or ''}")
        for name in run:
            if name not in deps and name != "python":
                c.error("pyproject-run", f"run requirement {name} is not a pyproject dependency")

    # common and ops
    if pkg is not None and pkg.kind == "common":
        exports = build.get("run_exports") or []
        if isinstance(exports, dict):
            exports = (exports.get("weak") or []) + (exports.get("strong") or [])
        own = [e for e in exports if split_spec(str(e))[0] == r.name]
        if not own:
            c.error("common-run-exports", "build/run_exports must pin the package itself "
                                          "({{ pin_subpackage(name, max_pin=\"x.x\") }} abi<N>_*)")
        else:
            _, spec_version, spec_build = split_spec(str(own[0]))
            abi = _abi(r.source_dir)
            if "max_pin=\"x.x\"" not in raw.replace("'", "\""):
                c.error("common-run-exports", "pin with pin_subpackage(..., max_pin=\"x.x\"): an op "
                                              "needs the same common minor")
            if abi is not None and spec_build != f"abi{abi}_*":
                c.error("common-run-exports", f"run_exports build must be abi{abi}_* (C ABI {abi} "
                                              f"from version.h), got {spec_build!r}")
            if abi is not None and not r.build_string.startswith(f"abi{abi}_"):
                c.error("common-run-exports", f"build/string must start with abi{abi}_ so the pin "
                                              f"can require the ABI, got {r.build_string!r}")
    if pkg is not None and pkg.kind == "op":
        if COMMON_NAME not in host:
            c.error("op-common", f"host requirements need {COMMON_NAME} (its run_exports pin the op "
                                 f"to the common it was built with)")
        if COMMON_NAME in run:
            c.error("op-common", f"{COMMON_NAME} must not be a run requirement: common's run_exports "
                                 f"add the exact pin")
    for fw in FRAMEWORK_PACKAGES:
        if fw in run:
            c.error("frameworks", f"{fw} must not be a run requirement (adapters are optional); "
                                  f"use run_constrained")
        if fw in host:
            pin = host[fw]
            if not pin or not pin.startswith("==") or any(ch in pin[2:] for ch in "<>=!*,|"):
                c.error("frameworks", f"host {fw} must be pinned to one version (=={{{{ {fw} }}}}), "
                                      f"got {pin!r}")
            if constrained.get(fw) != pin:
                c.error("frameworks", f"host {fw} {pin} needs run_constrained {fw} {pin} "
                                      f"(got {constrained.get(fw)!r})")

    # tests
    test = r.test
    imports = [str(i) for i in test.get("imports") or []]
    commands = [str(i) for i in test.get("commands") or []]
    requires = _names([str(i) for i in test.get("requires") or []])
    if pkg is not None:
        module = "ascend_ops.common" if pkg.kind == "common" else f"ascend_ops.{pkg.op}"
        if module not in imports:
            c.error("tests", f"test/imports must include {module}")
        wanted = "ascend-ops" if pkg.kind == "common" else f"ascend-ops check {pkg.op}"
        if not any(cmd.strip().startswith(wanted) for cmd in commands):
            c.error("tests", f"test/commands must run `{wanted}`")
    if "pip check" not in commands:
        c.error("tests", "test/commands must run `pip check`")
    elif "pip" not in requires:
        c.error("tests", "`pip check` needs pip in test/requires")
    for fw in FRAMEWORK_PACKAGES:
        if fw in host and requires.get(fw) != host[fw]:
            c.error("tests", f"the adapter built against {fw} {host[fw]} is tested only with "
                             f"test/requires {fw} {host[fw]}")

    about = r.about
    for key in ("license", "summary"):
        if not about.get(key):
            c.error("about", f"about/{key} is missing")


def _abi(source_dir: Optional[Path]) -> Optional[str]:
    if source_dir is None:
        return None
    header = source_dir / "include" / "ascend_ops" / "version.h"
    if not header.is_file():
        return None
    m = re.search(r"#define AOP_COMMON_ABI ([0-9]+)", header.read_text(encoding="utf-8"))
    return m.group(1) if m else None


def lint(rendered: Sequence[Rendered], pkg: Optional[Package]) -> List[Finding]:
    """Lint every rendered variant of one recipe; return the findings (errors first)."""
    c = _Collector()
    for r in rendered:
        if r.skip:
            continue
        raw = (r.recipe_dir / "meta.yaml").read_text(encoding="utf-8")
        _lint_variant(r, pkg, raw, c)
    return sorted(c.items, key=lambda f: (f.level != ERROR,))
