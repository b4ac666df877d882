"""``ci/recipe-check``: every package's conda recipe, checked on this machine without conda.

Stages, per package (common first; an op needs common in its host prefix):

render   every variant, every platform of ``recipes/recipe-check.yaml`` (emulated conda-build)
lint     :mod:`aop_ci.recipe.lint`
build    the recipe's build script into a temporary prefix (:mod:`aop_ci.recipe.build`), for
         the variants ``recipes/recipe-check.yaml`` selects on its build platform
package  a ``.conda`` written with conda-package-handling into a local channel
index    the local channel indexed with py-rattler
install  the package solved *alone* with py-rattler (an op: with common and nothing else of
         ours) and installed into an empty prefix; an op must refuse an ascend-op-common of
         another minor or another C ABI (metadata-only probe packages) and pick the real one
test     the package's own ``info/test`` (imports, commands) run in that same prefix, with
         the recipe's ``test/requires`` added (which must not change our packages in it)

Exit status 0 when every requested stage passed (or was skipped for a stated reason that is
not a failure), 1 otherwise, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from ..repo import ROOT, Package, RepoError, WorkTree, discover
from . import envs
from .build import BuildContext, Built, StageError, build_variant, package_variant
from .lint import COMMON_NAME, lint
from .render import EMULATION_NOTE, Rendered, RenderError, load_config, render_recipe
from .spec import split_spec
from .standins import STAND_IN_TAG, StandIns

__all__ = ["STAGES", "Checker", "main"]

STAGES = ("render", "lint", "build", "package", "index", "install", "test")
OK, FAILED, SKIPPED = "ok", "failed", "skipped"
TEST_TIMEOUT = 1800
NOTES = (
    EMULATION_NOTE,
    "build: the recipe's own build script runs for real (bash, conda-build's environment "
    "variables) into a temporary prefix made a venv of this Python; package: "
    "conda-package-handling; index, solve, install: py-rattler on local file:// channels",
    f"dependencies not built from this repository are stand-ins (build string "
    f"{STAND_IN_TAG}_*) pointing at this machine's installed copies",
)


@dataclass
class StageResult:
    status: str
    detail: str = ""
    seconds: float = 0.0

    def to_json(self) -> dict:
        return {"status": self.status, "detail": self.detail, "seconds": round(self.seconds, 1)}


@dataclass
class PackageReport:
    package: Package
    stages: Dict[str, StageResult] = field(default_factory=dict)
    variants: Dict[str, dict] = field(default_factory=dict)

    def set(self, stage: str, status: str, detail: str = "", seconds: float = 0.0) -> None:
        prev = self.stages.get(stage)
        if prev is not None and prev.status == FAILED and status != FAILED:
            return  # one failed variant fails the stage
        if prev is not None and prev.status == OK and status == OK and prev.detail and detail:
            detail = f"{prev.detail}; {detail}"
            seconds += prev.seconds
        self.stages[stage] = StageResult(status, detail, seconds)

    def failed(self, stage: Optional[str] = None) -> bool:
        if stage is not None:
            r = self.stages.get(stage)
            return r is not None and r.status == FAILED
        return any(r.status == FAILED for r in self.stages.values())

    def to_json(self) -> dict:
        return {"dir": self.package.dir, "version": self.package.version,
                "stages": {k: v.to_json() for k, v in self.stages.items()},
                "variants": self.variants}


def _tail(path: Optional[Path], n: int = 40) -> str:
    if path is None or not path.is_file():
        return ""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return "\n".join("      | " + line for line in lines[-n:])


def _read_yaml(path: Path) -> dict:
    import yaml
    return (yaml.safe_load(path.read_text(encoding="utf-8")) or {}) if path.is_file() else {}


class Checker:
    """Runs the stages over a set of packages; see the module docstring."""

    def __init__(self, root: Path, packages: Sequence[Package], workdir: Path,
                 stages: Sequence[str] = STAGES, platforms: Optional[Sequence[str]] = None,
                 build_variants: Optional[Mapping[str, Sequence[str]]] = None,
                 skip_existing: bool = False, out: Callable[[str], None] = print) -> None:
        self.root = Path(root)
        self.packages = list(packages)
        self.workdir = Path(workdir)
        self.stages = [s for s in STAGES if s in set(stages)]
        settings = _read_yaml(self.root / "recipes" / "recipe-check.yaml")
        self.platforms = list(platforms or settings.get("platforms") or ["linux-64"])
        self.build_platform = settings.get("build_platform", "linux-64")
        selected = {k: [str(x) for x in v] for k, v in (settings.get("build_variants") or {}).items()}
        for key, values in (build_variants or {}).items():
            selected[key] = [str(v) for v in values]
        self.build_variants = selected
        self.distributions = dict(settings.get("stand_in_distributions") or {})
        self.skip_existing = skip_existing
        self.out = out
        self.reports: Dict[str, PackageReport] = {p.name: PackageReport(p) for p in self.packages}
        self.rendered: Dict[str, Dict[str, List[Rendered]]] = {}
        self.to_build: Dict[str, List[Rendered]] = {}
        self.artifacts: Dict[str, List[Tuple[Rendered, Path, dict]]] = {}
        self.standins: Optional[StandIns] = None
        self.channel = self.workdir / "channel"
        self.cache = self.workdir / "cache"
        self.timings: Dict[str, float] = {}
        self.temporary = False  # the work directory is removed afterwards

    # --- helpers -----------------------------------------------------------------------------
    def say(self, stage: str, message: str) -> None:
        self.out(f"[{stage:<7}] {message}")

    @property
    def repo_names(self) -> Set[str]:
        return {p.name for p in self.packages}

    def _wants(self, stage: str) -> bool:
        return stage in self.stages

    def _blocked(self, report: PackageReport, stage: str) -> bool:
        """Whether an earlier stage failed; marks ``stage`` skipped if so."""
        earlier = STAGES[:STAGES.index(stage)]
        for s in earlier:
            if report.failed(s):
                report.set(stage, SKIPPED, f"{s} failed")
                return True
        return False

    # --- render and lint ---------------------------------------------------------------------
    def render_and_lint(self) -> None:
        configs = {}
        for platform in self.platforms:
            configs[platform] = load_config(self.root / "recipes" / "conda_build_config.yaml",
                                            platform)
        for pkg in self.packages:
            report = self.reports[pkg.name]
            recipe = self.root / pkg.recipe_dir
            per_platform: Dict[str, List[Rendered]] = {}
            start = time.monotonic()
            try:
                for platform, config in configs.items():
                    per_platform[platform] = render_recipe(recipe, config, platform)
            except RenderError as exc:
                report.set("render", FAILED, str(exc))
                self.say("render", f"FAIL {pkg.name}: {exc}")
                continue
            self.rendered[pkg.name] = per_platform
            counts = ", ".join(f"{p}: {sum(not r.skip for r in rs)} variant(s)"
                               for p, rs in per_platform.items())
            report.set("render", OK, counts, time.monotonic() - start)
            self.say("render", f"ok   {pkg.name} {pkg.version} ({counts})")
            if not self._wants("lint"):
                continue
            findings = lint([r for rs in per_platform.values() for r in rs], pkg)
            errors = [f for f in findings if f.level == "error"]
            for f in findings:
                self.say("lint", f"{'FAIL' if f.level == 'error' else 'warn'} {pkg.name}: {f}")
            if errors:
                report.set("lint", FAILED, "; ".join(str(f) for f in errors))
            else:
                report.set("lint", OK, f"{len(findings)} warning(s)" if findings else "clean")
                if not findings:
                    self.say("lint", f"ok   {pkg.name}")

    # --- build selection and stand-ins ---------------------------------------------------------
    def machine_overrides(self) -> Dict[str, str]:
        """This machine's compiler and C library versions, for the variants built here."""
        from .standins import machine_versions
        v = machine_versions()
        gcc_major = v["gcc"].split(".")[0]
        return {"c_compiler_version": gcc_major, "cxx_compiler_version": gcc_major,
                "fortran_compiler_version": gcc_major, "c_stdlib_version": v["glibc"]}

    def select_builds(self) -> None:
        py = f"{sys.version_info.major}.{sys.version_info.minor}"
        overrides = self.machine_overrides()
        config = load_config(self.root / "recipes" / "conda_build_config.yaml", self.build_platform)
        changed = {k: (config.values[k][0], v) for k, v in overrides.items()
                   if k in config.values and config.values[k] and config.values[k][0] != v}
        if changed:
            self.say("build", "built with this machine's compilers and C library: " + ", ".join(
                f"{k}={new} (the channel's variants say {old})" for k, (old, new) in sorted(changed.items())))
        for pkg in self.packages:
            report = self.reports[pkg.name]
            if self._blocked(report, "build") or pkg.name not in self.rendered:
                continue
            chosen, dropped = [], []
            try:
                here = render_recipe(self.root / pkg.recipe_dir, config, self.build_platform,
                                     overrides)
            except RenderError as exc:
                report.set("build", FAILED, f"render with this machine's compilers: {exc}")
                continue
            for r in here:
                if r.skip:
                    continue
                reasons = [f"{k}={r.variant[k]}" for k, allowed in self.build_variants.items()
                           if k in r.variant and r.variant[k] not in allowed]
                if r.variant.get("python") and r.variant["python"] != py:
                    reasons.append(f"python={r.variant['python']} (this is {py})")
                (dropped if reasons else chosen).append(r)
            if chosen:
                self.to_build[pkg.name] = chosen
            else:
                report.set("build", SKIPPED, f"no variant selected for {self.build_platform} here "
                                             f"({len(dropped)} rendered)")

    def make_standins(self) -> None:
        names: Set[str] = set()
        for variants in self.to_build.values():
            for r in variants:
                for section in ("build", "host", "run"):
                    names.update(split_spec(x)[0] for x in r.requirements(section))
                names.update(split_spec(str(x))[0] for x in r.test.get("requires") or [])
        self.standins = StandIns(self.workdir / "stand-ins", self.build_platform,
                                 exclude=self.repo_names, distributions=self.distributions)
        self.standins.make_all(names - self.repo_names)
        channel = self.standins.write_channel()
        envs.index_channel(channel, self.build_platform)
        for s in sorted(self.standins.made.values(), key=lambda s: s.name):
            self.say("stand-in", f"{s.name} {s.version} {s.build}: {s.summary}")
        for name, why in sorted(self.standins.missing.items()):
            self.say("stand-in", f"none for {name}: {why}")

    # --- build, package, index -----------------------------------------------------------------
    def _existing(self, r: Rendered) -> Optional[Path]:
        path = self.channel / self.build_platform / f"{r.dist_name}.conda"
        return path if self.skip_existing and path.is_file() else None

    def _read_index(self, artifact: Path) -> dict:
        import conda_package_handling.api as cph
        dest = self.workdir / "info-cache" / f"{artifact.name}-{artifact.stat().st_mtime_ns}"
        if not dest.exists():
            cph.extract(str(artifact), dest_dir=str(dest), components="info")
        return json.loads((dest / "info" / "index.json").read_text(encoding="utf-8"))

    def build_all(self, ctx: BuildContext) -> None:
        for pkg in self.packages:
            report = self.reports[pkg.name]
            for r in self.to_build.get(pkg.name, []):
                needs = [split_spec(x)[0] for x in r.requirements("host")]
                broken = [n for n in needs if n in self.reports and n != pkg.name
                          and (self.reports[n].failed() or not self.artifacts.get(n))]
                if broken:
                    for stage in ("build", "package"):
                        report.set(stage, SKIPPED, f"needs {', '.join(broken)}, which did not build")
                    self.say("build", f"skip {r.dist_name}: needs {', '.join(broken)}")
                    continue
                existing = self._existing(r)
                if existing is not None:
                    report.set("build", OK, f"{r.dist_name}: existing {existing.name} reused")
                    report.set("package", OK, f"{existing.name} (existing)")
                    self._record(pkg, r, existing, self._read_index(existing), None)
                    self.say("build", f"ok   {r.dist_name} (existing package reused)")
                    continue
                self.say("build", f"...  {r.dist_name} [{r.label()}]")
                try:
                    built = build_variant(ctx, r)
                except StageError as exc:
                    report.set("build", FAILED, f"{r.dist_name}: {exc}")
                    self.say("build", f"FAIL {r.dist_name}: {exc}\n{_tail(exc.log)}")
                    continue
                report.set("build", OK, f"{r.dist_name} in {built.seconds:.0f} s", built.seconds)
                self.say("build", f"ok   {r.dist_name}: {len(built.files)} new files in $PREFIX "
                                  f"({built.seconds:.0f} s; log {built.log})")
                if not self._wants("package"):
                    continue
                start = time.monotonic()
                try:
                    artifact = package_variant(ctx, built)
                except StageError as exc:
                    report.set("package", FAILED, f"{r.dist_name}: {exc}")
                    self.say("package", f"FAIL {r.dist_name}: {exc}")
                    continue
                envs.index_channel(self.channel, self.build_platform)
                report.set("package", OK, artifact.name, time.monotonic() - start)
                self.say("package", f"ok   {artifact.name} ({artifact.stat().st_size // 1024} KiB, "
                                    f"{len(built.files)} files, {len(built.placeholders)} with prefix "
                                    f"placeholders); depends: {', '.join(built.index['depends'])}")
                self._record(pkg, r, artifact, built.index, built)

    def _record(self, pkg: Package, r: Rendered, artifact: Path, index: dict,
                built: Optional[Built]) -> None:
        self.artifacts.setdefault(pkg.name, []).append((r, artifact, index))
        self.reports[pkg.name].variants[r.dist_name] = {
            "variant": r.variant, "artifact": str(artifact), "depends": index.get("depends", []),
            "constrains": index.get("constrains", []), "build_log": str(built.log) if built else None}

    def index_stage(self) -> None:
        start = time.monotonic()
        try:
            envs.index_channel(self.channel, self.build_platform)
        except Exception as exc:  # rattler's own error types
            for name in self.artifacts:
                self.reports[name].set("index", FAILED, str(exc))
            self.say("index", f"FAIL {exc}")
            return
        repodata = json.loads((self.channel / self.build_platform / "repodata.json").read_text())
        listed = set(repodata.get("packages.conda", {})) | set(repodata.get("packages", {}))
        for name, items in self.artifacts.items():
            missing = [a.name for _, a, _ in items if a.name not in listed]
            if missing:
                self.reports[name].set("index", FAILED, f"not in repodata.json: {missing}")
            else:
                self.reports[name].set("index", OK, f"{len(items)} in repodata.json",
                                       time.monotonic() - start)
        self.say("index", f"ok   {self.channel}: {len(listed)} package(s)")

    # --- install alone + probes ---------------------------------------------------------------
    def _channels(self, *extra: Path) -> List[Path]:
        assert self.standins is not None
        return [self.channel, *extra, self.standins.channel]

    def _exact(self, index: dict) -> str:
        return f"{index['name']} =={index['version']} {index['build']}"

    def _probe_channel(self) -> Optional[Tuple[Path, List[str]]]:
        """Metadata-only ascend-op-common packages an op must refuse: next minor, other ABI."""
        from .package import write_conda
        commons = self.artifacts.get(COMMON_NAME)
        if not commons:
            return None
        _, _, index = commons[0]
        parts = [int(x) for x in index["version"].split(".")[:3]]
        abi = index["build"].split("_")[0]
        abi_n = int(abi[3:]) if abi.startswith("abi") and abi[3:].isdigit() else 0
        probes = [
            (f"{parts[0]}.{parts[1] + 1}.0", f"{abi}_{STAND_IN_TAG}_probe_0",
             f"ascend-op-common >={parts[0]}.{parts[1] + 1}"),
            (f"{parts[0]}.{parts[1]}.{parts[2] + 1}", f"abi{abi_n + 1}_{STAND_IN_TAG}_probe_0",
             f"ascend-op-common * abi{abi_n + 1}_*"),
        ]
        channel = self.workdir / "probe-channel"
        if channel.exists():
            shutil.rmtree(channel)
        for version, build, _ in probes:
            stage = self.workdir / "probe-stage" / build
            stage.mkdir(parents=True, exist_ok=True)
            probe = dict(index, version=version, build=build, depends=[])
            write_conda(stage, [], probe, channel / self.build_platform,
                        about={"summary": "probe: metadata-only ascend-op-common an op must refuse"})
        envs.index_channel(channel, self.build_platform)
        return channel, [spec for _, _, spec in probes]

    def install_stage(self) -> None:
        probe = self._probe_channel()
        if probe is not None:
            self.say("install", f"probe channel {probe[0]}: metadata-only ascend-op-common "
                                f"packages an op must refuse ({'; '.join(probe[1])})")
        for pkg in self.packages:
            report = self.reports[pkg.name]
            for r, artifact, index in self.artifacts.get(pkg.name, []):
                start = time.monotonic()
                try:
                    detail = self._install_alone(pkg, index)
                    if pkg.kind == "op" and probe is not None:
                        detail += "; " + self._probe(index, *probe)
                except StageError as exc:
                    report.set("install", FAILED, f"{r.dist_name}: {exc}")
                    self.say("install", f"FAIL {r.dist_name}: {exc}")
                    continue
                report.set("install", OK, f"{r.dist_name}: {detail}", time.monotonic() - start)
                self.say("install", f"ok   {r.dist_name}: {detail}")

    def _install_alone(self, pkg: Package, index: dict) -> str:
        try:
            records = envs.solve(self._channels(), [self._exact(index)], self.build_platform,
                                 self.cache)
        except envs.SolveError as exc:
            raise StageError(f"does not solve alone: {exc}") from exc
        names = {rec.name.normalized: rec for rec in records}
        ours = sorted(n for n in names if n in self.repo_names)
        allowed = {pkg.name} | ({COMMON_NAME} if pkg.kind == "op" else set())
        if set(ours) - allowed:
            raise StageError(f"pulls in other packages of this repository: {sorted(set(ours) - allowed)}")
        if pkg.kind == "op" and COMMON_NAME not in names:
            raise StageError(f"an op must depend on {COMMON_NAME} (through its run_exports)")
        prefix = self._install_prefix(index)
        if prefix.parent.exists():
            shutil.rmtree(prefix.parent)
        envs.install(records, prefix, self.cache)
        meta = {p.name for p in (prefix / "conda-meta").glob("*.json")}
        for rec in records:
            if f"{envs.record_key(rec)}.json" not in meta:
                raise StageError(f"{envs.record_key(rec)} is not in {prefix}/conda-meta")
        stand = [n for n, rec in names.items() if STAND_IN_TAG in str(rec.build)]
        mine = ", ".join(f"{n} {names[n].version}" for n in ours)
        return f"installs alone: {mine} + {len(stand)} stand-ins into an empty prefix"

    def _install_prefix(self, index: dict) -> Path:
        return self.workdir / "install" / f"{index['name']}-{index['build']}" / "prefix"

    def _probe(self, index: dict, channel: Path, refused: List[str]) -> str:
        channels = self._channels(channel)
        exact = self._exact(index)
        for spec in refused:
            try:
                records = envs.solve(channels, [exact, spec], self.build_platform, self.cache)
            except envs.SolveError:
                continue
            got = [envs.record_key(r) for r in records if r.name.normalized == COMMON_NAME]
            raise StageError(f"not refused: {exact} solved together with {spec} ({got})")
        try:
            records = envs.solve(channels, [exact], self.build_platform, self.cache)
        except envs.SolveError as exc:
            raise StageError(f"with the probes present it no longer solves: {exc}") from exc
        common = [r for r in records if r.name.normalized == COMMON_NAME]
        if not common or STAND_IN_TAG in str(common[0].build):
            raise StageError(f"picked a probe instead of the real common: "
                             f"{[envs.record_key(r) for r in common]}")
        return (f"refuses {' and '.join(refused)}; picks {envs.record_key(common[0])} when the "
                f"probes are offered")

    # --- test ----------------------------------------------------------------------------------
    def test_stage(self) -> None:
        """The package's tests, in its install-stage prefix with ``test/requires`` added
        (which must not change what was installed alone)."""
        import conda_package_handling.api as cph
        for pkg in self.packages:
            report = self.reports[pkg.name]
            for r, artifact, index in self.artifacts.get(pkg.name, []):
                if report.failed("install"):
                    report.set("test", SKIPPED, "install failed")
                    continue
                start = time.monotonic()
                base = self.workdir / "test" / f"{index['name']}-{index['build']}"
                if base.exists():
                    shutil.rmtree(base)
                info = base / "pkg-info"
                cph.extract(str(artifact), dest_dir=str(info), components="info")
                tests = info / "info" / "test"
                requires = []
                if (tests / "test_time_dependencies.json").is_file():
                    requires = json.loads((tests / "test_time_dependencies.json").read_text())
                prefix = self._install_prefix(index)
                try:
                    records = envs.solve(self._channels(), [self._exact(index), *requires],
                                         self.build_platform, self.cache)
                    present = envs.installed(prefix)
                    alone = sorted(envs.record_key(x) for x in present if x.name.normalized in self.repo_names)
                    now = sorted(envs.record_key(x) for x in records if x.name.normalized in self.repo_names)
                    if alone != now:
                        raise StageError(f"test requirements {requires} change the packages of "
                                         f"this repository: {alone} -> {now}")
                    envs.install(records, prefix, self.cache, present=present)
                except (envs.SolveError, StageError) as exc:
                    report.set("test", FAILED, f"{r.dist_name}: test env: {exc}")
                    self.say("test", f"FAIL {r.dist_name}: test env: {exc}")
                    continue
                python = envs.make_python_prefix(prefix)
                ok, detail, log = self._run_tests(index, tests, prefix, python, base)
                extra = f" (+ test requirements {', '.join(requires)})" if requires else ""
                if ok:
                    report.set("test", OK, f"{r.dist_name}: {detail}{extra}", time.monotonic() - start)
                    self.say("test", f"ok   {r.dist_name}: {detail}{extra} "
                                     f"({time.monotonic() - start:.0f} s)")
                else:
                    report.set("test", FAILED, f"{r.dist_name}: {detail}")
                    self.say("test", f"FAIL {r.dist_name}: {detail}\n{_tail(log)}")
                report.variants.setdefault(r.dist_name, {})["test_log"] = str(log)

    def _run_tests(self, index: dict, tests: Path, prefix: Path, python: Path,
                   base: Path) -> Tuple[bool, str, Path]:
        py = sys.version_info
        cwd = base / "cwd"
        cwd.mkdir(parents=True, exist_ok=True)
        env = {"PATH": f"{prefix}/bin:/usr/local/bin:/usr/bin:/bin",
               "HOME": os.environ.get("HOME", str(base)), "LANG": os.environ.get("LANG", "C.UTF-8"),
               "TMPDIR": os.environ.get("TMPDIR", "/tmp"), "PREFIX": str(prefix),
               "CONDA_PREFIX": str(prefix), "PYTHON": str(python),
               "SP_DIR": str(prefix / "lib" / f"python{py.major}.{py.minor}" / "site-packages"),
               "PKG_NAME": index["name"], "PKG_VERSION": index["version"],
               "PKG_BUILD_STRING": index["build"], "CONDA_BUILD_STATE": "TEST",
               "PYTHONNOUSERSITE": "1", "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1",
               "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        log = base / "test.log"
        ran = []
        with open(log, "w", encoding="utf-8") as out:
            for script, cmd in (("run_test.py", [str(python), "-s"]), ("run_test.sh", ["bash", "-e"])):
                path = tests / script
                if not path.is_file():
                    continue
                out.write(f"=== {script}\n")
                out.flush()
                try:
                    proc = subprocess.run(cmd + [str(path)], cwd=cwd, env=env, stdout=out,
                                          stderr=subprocess.STDOUT, timeout=TEST_TIMEOUT)
                except subprocess.TimeoutExpired:
                    return False, f"{script} timed out after {TEST_TIMEOUT} s", log
                if proc.returncode != 0:
                    return False, f"{script} exited with {proc.returncode} (log {log})", log
                ran.append(script)
        if not ran:
            return False, "the package has no tests (info/test is empty)", log
        return True, f"{' and '.join(ran)} passed in {prefix}", log

    # --- the whole run -------------------------------------------------------------------------
    def run(self) -> bool:
        for note in NOTES:
            self.out(f"recipe-check: {note}")
        self.workdir.mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        self.render_and_lint()
        self.timings["render+lint"] = time.monotonic() - t0
        if self._wants("build"):
            self.select_builds()
            if self.to_build:
                t = time.monotonic()
                self.make_standins()
                (self.channel / self.build_platform).mkdir(parents=True, exist_ok=True)
                envs.index_channel(self.channel, self.build_platform)
                assert self.standins is not None
                ctx = BuildContext(workdir=self.workdir, channel=self.channel,
                                   standins=self.standins.channel, platform=self.build_platform,
                                   pin_run_as_build=self._pin_run_as_build(), cache=self.cache)
                self.build_all(ctx)
                self.timings["build+package"] = time.monotonic() - t
        if self._wants("index") and self.artifacts:
            self.index_stage()
        if self._wants("install") and self.artifacts:
            t = time.monotonic()
            self.install_stage()
            self.timings["install"] = time.monotonic() - t
        if self._wants("test") and self.artifacts:
            t = time.monotonic()
            self.test_stage()
            self.timings["test"] = time.monotonic() - t
        self._fill_skips()
        self._summary()
        return not any(r.failed() for r in self.reports.values())

    def _pin_run_as_build(self) -> Mapping[str, Mapping[str, str]]:
        config = load_config(self.root / "recipes" / "conda_build_config.yaml", self.build_platform)
        return config.pin_run_as_build

    def _fill_skips(self) -> None:
        for report in self.reports.values():
            for stage in self.stages:
                if stage in report.stages:
                    continue
                failed = next((s for s in STAGES[:STAGES.index(stage)] if report.failed(s)), None)
                report.set(stage, SKIPPED, f"{failed} failed" if failed else "nothing to do")

    def _summary(self) -> None:
        width = max([len(p.name) for p in self.packages] + [7])
        self.out("")
        self.out(f"{'package':<{width}}  " + "  ".join(f"{s:<7}" for s in self.stages))
        for pkg in self.packages:
            r = self.reports[pkg.name]
            cells = [r.stages[s].status if s in r.stages else "-" for s in self.stages]
            self.out(f"{pkg.name:<{width}}  " + "  ".join(f"{c:<7}" for c in cells))
        bad = [p.name for p in self.packages if self.reports[p.name].failed()]
        timing = ", ".join(f"{k} {v:.0f} s" for k, v in self.timings.items())
        self.out(f"\nrecipe-check: {len(self.packages) - len(bad)} package(s) ok, {len(bad)} "
                 f"failed{': ' + ', '.join(bad) if bad else ''} ({timing}; work dir {self.workdir}"
                 f"{', removed at exit (--keep keeps it)' if self.temporary else ''})")

    def to_json(self) -> dict:
        return {"notes": list(NOTES), "workdir": str(self.workdir), "channel": str(self.channel),
                "stand_ins": [s.to_json() for s in (self.standins.made.values() if self.standins else [])],
                "stand_in_channel": str(self.standins.channel) if self.standins else None,
                "build_variants": self.build_variants, "platforms": self.platforms,
                "timings": {k: round(v, 1) for k, v in self.timings.items()},
                "packages": {n: r.to_json() for n, r in self.reports.items()},
                "ok": not any(r.failed() for r in self.reports.values())}


# --- command line --------------------------------------------------------------------------------
def _select(all_packages: Sequence[Package], wanted: Sequence[str]) -> List[Package]:
    table = {}
    for p in all_packages:
        for alias in (p.name, p.dir, p.op or "", p.dir.rsplit("/", 1)[-1]):
            if alias:
                table[alias] = p
    unknown = [w for w in wanted if w.rstrip("/") not in table]
    if unknown:
        raise RepoError(f"no such package: {', '.join(unknown)} (packages: "
                        f"{', '.join(p.name for p in all_packages)})")
    chosen = {table[w.rstrip('/')].name for w in wanted}
    return [p for p in all_packages if p.name in chosen]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ci/recipe-check",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="""\
Check every package's conda recipe on this machine, without conda. Stages:
  render   every variant and platform: an emulation of conda-build's Jinja,
           selectors and conda_build_config.yaml variants (conda-build is not run)
  lint     conda-forge conventions and this repository's packaging rules
  build    the recipe's build script into a temporary prefix, with conda-build's
           environment variables and host/build prefixes solved from local channels
  package  the new files packed as .conda with conda-package-handling
  index    the local channel indexed with py-rattler
  install  each package solved alone (an op: with only common) and installed into
           an empty prefix with py-rattler; an op must refuse another common
  test     the recipe's test imports and commands run in that prefix (with the
           recipe's test requirements added)
Dependencies not built from this repository come from stand-in packages
(build string aop_stand_in_*) that point at this machine's installed copies.""",
        epilog="examples:\n  ci/recipe-check\n  ci/recipe-check --package reshape_and_cache "
               "--variant framework=torch\n  ci/recipe-check --stages render,lint")
    p.add_argument("--package", action="append", default=[], metavar="NAME",
                   help="a package name, directory or op name (repeatable; default: every "
                        "package). An op's build also builds common, its host dependency.")
    p.add_argument("--range", help="only the packages this git range touches (as ci/changed)")
    p.add_argument("--stages", default=",".join(STAGES),
                   help=f"comma-separated subset of {','.join(STAGES)} (default: all)")
    p.add_argument("--platform", action="append", default=[],
                   help="platform to render and lint for (repeatable; default from "
                        "recipes/recipe-check.yaml)")
    p.add_argument("--variant", action="append", default=[], metavar="KEY=VALUE",
                   help="build variants with KEY=VALUE (repeatable; replaces that key of "
                        "build_variants in recipes/recipe-check.yaml)")
    p.add_argument("--workdir", help="work directory, kept afterwards (default: a temporary "
                                     "directory, removed unless --keep)")
    p.add_argument("--keep", action="store_true", help="keep the temporary work directory")
    p.add_argument("--skip-existing", action="store_true",
                   help="reuse packages already in the work directory's channel")
    p.add_argument("--json", metavar="FILE", help="write the full report as JSON")
    p.add_argument("--root", default=str(ROOT), help="repository root (default: this checkout)")
    return p


def _variants(items: Sequence[str]) -> Dict[str, List[str]]:
    out: Dict[str, List[str]] = {}
    for item in items:
        if "=" not in item:
            raise RepoError(f"--variant {item!r}: expected KEY=VALUE")
        key, value = item.split("=", 1)
        out.setdefault(key.strip(), []).append(value.strip())
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    root = Path(args.root).resolve()
    try:
        stages = [s.strip() for s in args.stages.split(",") if s.strip()]
        bad = [s for s in stages if s not in STAGES]
        if bad:
            raise RepoError(f"unknown stage(s) {bad}; stages: {', '.join(STAGES)}")
        all_packages = discover(WorkTree(root))
        if args.range:
            from ..changed import _split_range, changed_files, compute
            base, head, mb = _split_range(args.range)
            packages = compute(changed_files(root, base, head, mb), all_packages).packages
        elif args.package:
            packages = _select(all_packages, args.package)
        else:
            packages = all_packages
        if "build" in stages and any(p.kind == "op" for p in packages):
            common = [p for p in all_packages if p.kind == "common"]
            packages = common + [p for p in packages if p.kind != "common"]
        variants = _variants(args.variant)
    except RepoError as exc:
        print(f"ci/recipe-check: {exc}", file=sys.stderr)
        return 2
    if not packages:
        print("ci/recipe-check: no package to check")
        return 0
    temp = None
    if args.workdir:
        workdir = Path(args.workdir).resolve()
    else:
        temp = tempfile.mkdtemp(prefix="recipe-check-")
        workdir = Path(temp)
    checker = Checker(root, packages, workdir, stages=stages, platforms=args.platform or None,
                      build_variants=variants, skip_existing=args.skip_existing,
                      out=lambda line: print(line, flush=True))
    checker.temporary = temp is not None and not args.keep
    try:
        ok = checker.run()
        if args.json:
            Path(args.json).write_text(json.dumps(checker.to_json(), indent=2), encoding="utf-8")
    finally:
        if temp and not args.keep:
            shutil.rmtree(temp, ignore_errors=True)
    return 0 if ok else 1
