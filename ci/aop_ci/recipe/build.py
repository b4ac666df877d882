"""Build one rendered recipe variant into a temporary prefix and pack it, like conda-build.

What happens, in conda-build's order:

1. the source (``source: path:``) is copied into ``work/`` -- the files git tracks or would
   track (``git ls-files -co --exclude-standard``), so local build trees are left behind;
2. the ``host`` requirements are solved against the local channel (common, once built) and
   the stand-ins, installed into a long, padded host prefix ``$PREFIX`` (conda-build's
   ``_h_env_placehold...``, so binary prefixes can be rewritten on install) which is then made
   a venv; the ``build`` requirements likewise into ``$BUILD_PREFIX``;
3. the activation scripts of both prefixes are sourced and the recipe's ``build.sh`` (or
   ``build/script``) is run by ``bash -e`` in ``work/`` with conda-build's variables
   (``PREFIX``, ``BUILD_PREFIX``, ``SRC_DIR``, ``RECIPE_DIR``, ``PYTHON``, ``SP_DIR``,
   ``PKG_*``, ``CPU_COUNT``, ``target_platform``, ``PIP_NO_INDEX``, ...) and
   ``build/script_env``; nothing else is inherited from the caller's environment;
4. packing: the files the script added to ``$PREFIX`` (bytecode left out) become the payload;
   files holding ``$PREFIX`` are recorded for prefix replacement; run requirements are the
   recipe's ``run`` (``pin_run_as_build`` applied from the solved host), plus the host
   packages' weak and strong ``run_exports`` and the build packages' strong ones.
   A payload that is empty, or that loads code from the build's work directory (an editable
   install), is refused.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from . import envs
from .package import detect_prefix, write_conda
from .render import PLATFORMS, Rendered
from .spec import apply_pin_expressions, split_spec

__all__ = ["StageError", "BuildContext", "Built", "build_variant", "package_variant"]

HOST_PREFIX_LENGTH = 160
BUILD_TIMEOUT = 3600


class StageError(Exception):
    """A stage failed; ``log`` names a file with the details when there is one."""

    def __init__(self, message: str, log: Optional[Path] = None) -> None:
        super().__init__(message)
        self.log = log


@dataclass
class BuildContext:
    """What every build shares: work area, channels and settings."""

    workdir: Path
    channel: Path
    standins: Path
    platform: str
    pin_run_as_build: Mapping[str, Mapping[str, str]]
    cache: Path
    cpu_count: int = field(default_factory=lambda: os.cpu_count() or 1)

    @property
    def channels(self) -> List[Path]:
        return [self.channel, self.standins]


@dataclass
class Built:
    """A variant whose build script ran: its prefix, new files and the solved environments."""

    rendered: Rendered
    work: Path
    prefix: Path
    build_prefix: Path
    src: Path
    files: List[str]
    host_records: list
    build_records: list
    log: Path
    seconds: float
    artifact: Optional[Path] = None
    index: Dict = field(default_factory=dict)
    placeholders: Dict[str, Tuple[str, str]] = field(default_factory=dict)


def _copy_source(source: Path, dest: Path) -> int:
    proc = subprocess.run(["git", "-C", str(source), "ls-files", "-co", "--exclude-standard", "-z",
                           "--", "."], capture_output=True)
    if proc.returncode == 0:
        files = [f for f in proc.stdout.decode().split("\0") if f]
    else:  # not a git checkout: everything but build trees and caches
        files = [str(p.relative_to(source)) for p in source.rglob("*")
                 if p.is_file() and not {"build", ".git", "__pycache__"} & set(p.relative_to(source).parts)]
    n = 0
    for rel in files:
        src = source / rel
        if not src.is_file() and not src.is_symlink():
            continue  # deleted in the working tree
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target, follow_symlinks=False)
        n += 1
    return n


def _padded_prefix(work: Path) -> Path:
    base = str(work / "_h_env")
    pad = max(0, HOST_PREFIX_LENGTH - len(base))
    return Path(base + ("_placehold" * (pad // 10 + 1))[:pad])


def _snapshot(prefix: Path) -> set:
    out = set()
    for p in prefix.rglob("*"):
        if p.is_file() or p.is_symlink():
            out.add(p.relative_to(prefix).as_posix())
    return out


def _solve_install(ctx: BuildContext, specs: Sequence[str], prefix: Path, what: str) -> list:
    if not specs:
        prefix.mkdir(parents=True, exist_ok=True)
        return []
    try:
        records = envs.solve(ctx.channels, specs, ctx.platform, ctx.cache)
    except envs.SolveError as exc:
        raise StageError(f"{what} requirements do not solve: {exc}") from exc
    envs.install(records, prefix, ctx.cache)
    return records


def _script(r: Rendered) -> str:
    script = r.build.get("script")
    if script:
        return "\n".join(script) if isinstance(script, list) else str(script)
    path = r.recipe_dir / "build.sh"
    if not path.is_file():
        raise StageError(f"{r.recipe_dir}: no build.sh and no build/script")
    return path.read_text(encoding="utf-8")


def _script_env(r: Rendered, outer: Mapping[str, str]) -> Tuple[Dict[str, str], List[str]]:
    env, notes = {}, []
    for item in r.build.get("script_env") or []:
        item = str(item)
        if "=" in item:
            key, value = item.split("=", 1)
            env[key] = value
        elif item in outer:
            env[item] = outer[item]
        else:
            notes.append(f"script_env {item} is not set in the caller's environment")
    return env, notes


def _environment(ctx: BuildContext, r: Rendered, prefix: Path, build_prefix: Path,
                 src: Path) -> Dict[str, str]:
    py = sys.version_info
    info = PLATFORMS[ctx.platform]
    sp_dir = prefix / "lib" / f"python{py.major}.{py.minor}" / "site-packages"
    env = {
        "PATH": f"{prefix}/bin:{build_prefix}/bin:/usr/local/bin:/usr/bin:/bin",
        "HOME": os.environ.get("HOME", str(ctx.workdir)),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        "CONDA_BUILD": "1", "CONDA_BUILD_STATE": "BUILD",
        "PREFIX": str(prefix), "BUILD_PREFIX": str(build_prefix), "SRC_DIR": str(src),
        "RECIPE_DIR": str(r.recipe_dir), "PYTHON": str(prefix / "bin" / "python"),
        "PY_VER": f"{py.major}.{py.minor}", "CONDA_PY": f"{py.major}{py.minor}",
        "SP_DIR": str(sp_dir), "STDLIB_DIR": str(prefix / "lib" / f"python{py.major}.{py.minor}"),
        "PKG_NAME": r.name, "PKG_VERSION": r.version, "PKG_BUILDNUM": str(r.build_number),
        "PKG_BUILD_STRING": r.build_string, "PKG_HASH": r.build_string.rsplit("_", 1)[0][-8:],
        "CPU_COUNT": str(ctx.cpu_count), "SHLIB_EXT": ".so",
        "target_platform": ctx.platform, "build_platform": ctx.platform, "SUBDIR": ctx.platform,
        "ARCH": info["bits"], "HOST": info["triplet"], "BUILD": info["triplet"],
        "PIP_NO_INDEX": "True", "PIP_NO_DEPENDENCIES": "True", "PIP_IGNORE_INSTALLED": "True",
        "PIP_NO_BUILD_ISOLATION": "False", "PIP_CACHE_DIR": str(ctx.workdir / "pip_cache"),
        "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PYTHONNOUSERSITE": "1",
    }
    return env


def build_variant(ctx: BuildContext, r: Rendered) -> Built:
    """Run the build stage of one variant (see the module docstring).

    Raises
    ------
    StageError
        If the environments do not solve or the build script fails (``log`` has its output).
    """
    start = time.monotonic()
    work = ctx.workdir / "build" / r.dist_name
    if work.exists():
        shutil.rmtree(work)
    src, build_prefix, prefix = work / "work", work / "_build_env", _padded_prefix(work)
    src.mkdir(parents=True)
    if r.source_dir is None or not r.source_dir.is_dir():
        raise StageError(f"source path {r.source_dir} is not a directory")
    _copy_source(r.source_dir, src)
    host_records = _solve_install(ctx, r.requirements("host"), prefix, "host")
    envs.make_python_prefix(prefix)
    build_records = _solve_install(ctx, r.requirements("build"), build_prefix, "build")
    before = _snapshot(prefix)

    env = _environment(ctx, r, prefix, build_prefix, src)
    extra, notes = _script_env(r, os.environ)
    env.update(extra)
    lines = ["# generated by ci/recipe-check (conda-build's conda_build.sh)"]
    for note in notes:
        lines.append(f"echo 'recipe-check: {note}' >&2")
    for pfx in (prefix, build_prefix):
        lines.append(f'CONDA_PREFIX="{pfx}"')
        lines.append(f'for f in "{pfx}"/etc/conda/activate.d/*.sh; do [ -f "$f" ] && . "$f"; done')
    lines.append(f'export CONDA_PREFIX="{prefix}"')
    lines.append(_script(r))
    script = work / "conda_build.sh"
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    log = work / "build.log"
    with open(log, "w", encoding="utf-8") as out:
        try:
            proc = subprocess.run(["bash", "-e", str(script)], cwd=src, env=env, stdout=out,
                                  stderr=subprocess.STDOUT, timeout=BUILD_TIMEOUT)
        except subprocess.TimeoutExpired as exc:
            raise StageError(f"build script timed out after {BUILD_TIMEOUT} s", log) from exc
    if proc.returncode != 0:
        raise StageError(f"build script exited with {proc.returncode}", log)
    after = _snapshot(prefix)
    files = sorted(f for f in after - before
                   if "__pycache__/" not in f and not f.endswith(".pyc") and not f.startswith("conda-meta/"))
    return Built(rendered=r, work=work, prefix=prefix, build_prefix=build_prefix, src=src,
                 files=files, host_records=host_records, build_records=build_records, log=log,
                 seconds=time.monotonic() - start)


_RUN_EXPORTS: Dict[str, Dict[str, List[str]]] = {}


def _run_exports(record, workdir: Path) -> Dict[str, List[str]]:
    """``info/run_exports.json`` of a solved record, read from its package file."""
    from urllib.parse import unquote, urlparse

    import conda_package_handling.api as cph
    path = Path(unquote(urlparse(str(record.url)).path))
    stat = path.stat()
    key = f"{path.name}-{stat.st_size}-{stat.st_mtime_ns}"
    if key not in _RUN_EXPORTS:
        dest = workdir / "info-cache" / key
        if not dest.exists():
            cph.extract(str(path), dest_dir=str(dest), components="info")
        f = dest / "info" / "run_exports.json"
        _RUN_EXPORTS[key] = json.loads(f.read_text(encoding="utf-8")) if f.is_file() else {}
    return _RUN_EXPORTS[key]


def _depends(ctx: BuildContext, b: Built) -> List[str]:
    r = b.rendered
    host_versions = {rec.name.normalized: str(rec.version) for rec in b.host_records}
    depends: List[str] = []
    for req in r.requirements("run"):
        name, version, build = split_spec(req)
        pin = ctx.pin_run_as_build.get(name)
        if version is None and pin and name in host_versions:
            req = f"{name} {apply_pin_expressions(host_versions[name], pin.get('min_pin', 'x.x.x.x.x.x'), pin.get('max_pin', 'x'))}"
        depends.append(req)
    exported: List[str] = []
    for rec in b.host_records:
        ex = _run_exports(rec, ctx.workdir)
        exported += list(ex.get("weak", [])) + list(ex.get("strong", []))
    for rec in b.build_records:
        exported += list(_run_exports(rec, ctx.workdir).get("strong", []))
    ignore = set(r.build.get("ignore_run_exports") or [])
    for spec in exported:
        name = split_spec(spec)[0]
        if name in ignore:
            continue
        bare = [d for d in depends if d == name]
        for d in bare:
            depends.remove(d)
        if spec not in depends:
            depends.append(spec)
    return depends


def _about(r: Rendered) -> Dict:
    about = {k: v for k, v in r.about.items()}
    about["extra"] = {"aop_built_by": "ci/recipe-check: conda-build emulated (see ci/aop_ci/recipe)"}
    return about


def _tests(r: Rendered) -> Dict[str, str]:
    test = r.test
    files: Dict[str, str] = {}
    commands = [str(c) for c in test.get("commands") or []]
    if commands:
        files["run_test.sh"] = "set -ex\n" + "\n".join(commands) + "\nexit 0\n"
    imports = [str(i) for i in test.get("imports") or []]
    if imports:
        files["run_test.py"] = "".join(f"print({'import: ' + i!r})\nimport {i}\n\n" for i in imports)
    requires = [str(q) for q in test.get("requires") or []]
    if requires:
        files["test_time_dependencies.json"] = json.dumps(requires)
    return files


def package_variant(ctx: BuildContext, b: Built) -> Path:
    """Pack a :class:`Built` into ``ctx.channel/<platform>/`` (see the module docstring).

    Raises
    ------
    StageError
        On an empty payload or one that loads code from the work directory.
    """
    r = b.rendered
    if not b.files:
        raise StageError("the build script installed nothing into $PREFIX")
    src_text = str(b.src).encode()
    leaks = []
    for rel in b.files:
        if rel.endswith((".pth", ".py")) and src_text in (b.prefix / rel).read_bytes():
            leaks.append(rel)
    if leaks:
        raise StageError(f"files load code from the build's work directory {b.src} (an editable "
                         f"install?): {', '.join(leaks[:5])}")
    stage = b.work / "stage"
    if stage.exists():
        shutil.rmtree(stage)
    for rel in b.files:
        target = stage / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(b.prefix / rel, target, follow_symlinks=False)
    placeholders = detect_prefix(stage, b.files, str(b.prefix))
    depends = _depends(ctx, b)
    run_exports = r.build.get("run_exports") or None
    if isinstance(run_exports, list):
        run_exports = {"weak": [str(x) for x in run_exports]}
    index = {"name": r.name, "version": r.version, "build": r.build_string,
             "build_number": r.build_number, "depends": depends,
             "constrains": r.requirements("run_constrained"),
             "license": str(r.about.get("license", "")), "subdir": ctx.platform,
             "platform": "linux", "arch": PLATFORMS[ctx.platform]["arch"]}
    recipe_files = {"meta.yaml": r.text,
                    "meta.yaml.template": (r.recipe_dir / "meta.yaml").read_text(encoding="utf-8"),
                    "conda_build_config.yaml": json.dumps(r.variant, indent=2, sort_keys=True)}
    if (r.recipe_dir / "build.sh").is_file():
        recipe_files["build.sh"] = (r.recipe_dir / "build.sh").read_text(encoding="utf-8")
    artifact = write_conda(stage, b.files, index, ctx.channel / ctx.platform, about=_about(r),
                           run_exports=run_exports, placeholders=placeholders,
                           recipe_files=recipe_files, test_files=_tests(r))
    b.artifact, b.index, b.placeholders = artifact, index, placeholders
    return artifact
