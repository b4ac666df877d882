"""``ci/recipe-check``: the conda packages built for real by rattler-build, on a machine
without conda channels, then installed alone and checked.

1. ``stand-ins``: ``ci/standins/recipe.yaml`` built into ``WORKDIR/stand-ins`` (:mod:`.standins`).
2. ``build``: common, then each op against ``WORKDIR/channel`` (which then holds that common),
   by py-rattler-build with ``recipes/variants.yaml`` restricted to the CPU variant(s) and the
   compiler / C library / python keys set to this machine's; rattler-build runs each recipe's
   ``tests:`` in its own test environments (imports, ``pip check``, ``ascend-ops ...``).
3. ``install``: each op solved **alone** by py-rattler against the two channels, installed into
   an empty prefix, and ``ascend-ops check <package>`` (every op it ships) run there.
4. ``refuse``: probe packages of common -- the next minor, and the same minor with the next C
   ABI -- are added to a third channel: asked for beside the op, the solver must refuse each one;
   asked for the op alone, it must still choose the common that was built.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from ..repo import ROOT, Package, RepoError, WorkTree, discover
from . import rattler, standins

__all__ = ["main", "build_parser", "probe_recipe"]

DEFAULT_VARIANT = {"framework": ["none"], "cann": ["none"]}


def _select(root: Path, names: Sequence[str]) -> List[Package]:
    packages = discover(WorkTree(root))
    if not names:
        return packages
    table = {a: p for p in packages for a in (p.name, p.dir, p.op) if a}
    unknown = [n for n in names if n not in table]
    if unknown:
        raise RepoError(f"no such package: {', '.join(unknown)}")
    wanted = {table[n].name for n in names}
    # common first, always: an op is built against the common just built; the integration
    # package installs beside every op, so it brings them
    if any(table[n].kind == "integration" for n in names):
        wanted |= {p.name for p in packages if p.kind == "op"}
    return [p for p in packages if p.name in wanted or p.kind == "common"]


def probe_recipe(root: Path, common: Package, dest: Path) -> Path:
    """A recipe of two metadata-only ``ascend-op-common`` probes no op may install beside:
    the next minor (same ABI) and the same version with the next ABI."""
    major, minor = (int(x) for x in common.version.split(".")[:2])
    version_h = (root / common.dir / "include" / "ascend_ops" / "version.h").read_text()
    abi = int(version_h.split("#define AOP_COMMON_ABI ")[1].split()[0])
    outputs = [(f"{major}.{minor + 1}.0", abi), (common.version, abi + 1)]
    lines = ["recipe: {name: aop-probes, version: '0'}", "outputs:"]
    for version, probe_abi in outputs:
        lines += [f"  - package: {{name: {common.name}, version: '{version}'}}",
                  f"    build: {{string: abi{probe_abi}_aop_probe_0, script: "
                  f"'mkdir -p $PREFIX/share && echo probe > $PREFIX/share/aop-probe'}}"]
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "recipe.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dest


def _solve(channels: Sequence[Path], specs: Sequence[str], cache: Path) -> list:
    import rattler as r
    gateway = r.Gateway(cache_dir=cache, show_progress=False)
    virtual = [vp.into_generic() for vp in r.VirtualPackage.detect()]
    return asyncio.run(r.solve([r.Channel(rattler.uri(c)) for c in channels], list(specs),
                               gateway=gateway, platforms=[_subdir(), "noarch"],
                               virtual_packages=virtual))


def _subdir() -> str:
    import rattler as r
    return str(r.Platform.current())


def _install_and_check(op: Package, result, channels: List[Path], probes: Path,
                       workdir: Path) -> Dict[str, object]:
    import rattler as r
    from rattler.exceptions import SolverError
    cache = workdir / "rattler-cache"
    spec = f"{result.name} =={result.version} {result.build_string}"
    out: Dict[str, object] = {"spec": spec}
    # the framework the variant's adapters are built against, from the stand-ins channel
    frameworks = {"torch": ["pytorch"], "mindspore": ["mindspore"], "all": ["pytorch", "mindspore"]}
    extra = frameworks.get(result.build_string.split("_")[0], [])
    out["with"] = extra
    records = _solve(channels, [spec, *extra], cache)
    out["solved"] = sorted(f"{x.name.normalized}-{x.version}-{x.build}" for x in records)
    prefix = workdir / "prefixes" / f"{op.op}-{result.build_string}"
    shutil.rmtree(prefix, ignore_errors=True)
    asyncio.run(r.install(records, prefix, cache_dir=cache, show_progress=False))
    env = dict(os.environ, PATH=f"{prefix / 'bin'}:{os.environ.get('PATH', '')}",
               CONDA_PREFIX=str(prefix), PYTHONNOUSERSITE="1")
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    proc = subprocess.run([str(prefix / "bin" / "ascend-ops"), "check", op.name], env=env,
                          capture_output=True, text=True, timeout=900)
    out["check_output"] = (proc.stdout + proc.stderr)[-3000:]
    out["prefix"] = str(prefix)
    out["check"] = "ok" if proc.returncode == 0 else f"failed ({proc.returncode})"
    # The probes: each refused beside the op; the op alone still gets the built common.
    refused = {}
    for rec_spec in _probe_specs(probes):
        try:
            _solve(channels + [probes], [spec, rec_spec], cache)
            refused[rec_spec] = "INSTALLABLE (wrong)"
        except SolverError as exc:  # the expected outcome
            refused[rec_spec] = "refused: " + str(exc).strip().splitlines()[0][:200]
    out["refused"] = refused
    alone = _solve(channels + [probes], [spec], cache)
    common = [f"{x.version}-{x.build}" for x in alone if x.name.normalized == "ascend-op-common"]
    out["common_chosen_with_probes"] = common[0] if common else None
    return out


def _probe_specs(probes: Path) -> List[str]:
    data = json.loads((probes / _subdir() / "repodata.json").read_text())
    recs = list(data.get("packages.conda", {}).values()) + list(data.get("packages", {}).values())
    return sorted(f"{p['name']} =={p['version']} {p['build']}" for p in recs)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ci/recipe-check",
        description="Build the conda packages for real with rattler-build (common first, then "
                    "each op against it), run their recipe tests, install each op alone with "
                    "py-rattler and run `ascend-ops check <package>` there; an incompatible common "
                    "must be refused. Dependencies not built here come from local stand-ins.")
    p.add_argument("--package", action="append", default=[], metavar="NAME",
                   help="package name, directory or op name (repeatable; common is always built)")
    p.add_argument("--variant", action="append", default=[], metavar="KEY=VALUE",
                   help="variant values to build (repeatable; default framework=none cann=none)")
    p.add_argument("--workdir", default="build/recipe-check", help="channels, prefixes, logs")
    p.add_argument("--skip-existing", action="store_true",
                   help="keep WORKDIR's channel and skip packages already built into it")
    p.add_argument("--json", metavar="FILE", help="write the report as JSON")
    p.add_argument("--verbose", action="store_true", help="echo rattler-build's log")
    p.add_argument("--root", default=str(ROOT), help="repository root (default: this checkout)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    root = Path(args.root).resolve()
    workdir = Path(args.workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    report: Dict[str, object] = {"tool": "rattler-build (py-rattler-build) + py-rattler",
                                 "packages": {}, "ok": False}
    started = time.monotonic()

    def say(msg: str) -> None:
        print(msg, flush=True)

    def save() -> None:
        report["seconds"] = round(time.monotonic() - started, 1)
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=2, default=str))

    try:
        selected = _select(root, args.package)
        variant = dict(DEFAULT_VARIANT)
        for item in args.variant:
            key, sep, value = item.partition("=")
            if not sep:
                raise RepoError(f"--variant {item!r}: expected KEY=VALUE")
            variant[key] = [value]
    except RepoError as exc:
        print(f"ci/recipe-check: {exc}", file=sys.stderr)
        return 2

    channel = workdir / "channel"
    if not args.skip_existing:
        shutil.rmtree(channel, ignore_errors=True)
    t0 = time.monotonic()
    ctx = standins.make_channel(workdir, root)
    machine = standins.compiler_overrides(ctx)
    report["stand_ins"] = sorted(p.name for p in (workdir / "stand-ins").glob("*/*.conda"))
    report["machine_variant"] = machine
    report["variant"] = variant
    say(f"stand-ins ({time.monotonic() - t0:.1f}s): {', '.join(report['stand_ins'])}")
    say(f"variant: {variant}; this machine's toolchain replaces {machine}")
    probes = workdir / "probes"
    shutil.rmtree(probes, ignore_errors=True)
    common = next(p for p in selected if p.kind == "common")
    rattler.build(root, probe_recipe(root, common, workdir / "probe-recipe"), probes, [], test=False,
                  variants=False, log=workdir / "probes.log")
    failed = False
    for pkg in selected:
        entry: Dict[str, object] = {"kind": pkg.kind, "version": pkg.version}
        report["packages"][pkg.name] = entry  # type: ignore[index]
        overrides = dict(machine)
        if pkg.kind == "op":
            overrides.update(variant)
        t0 = time.monotonic()
        say(f"== {pkg.name} {pkg.version}: rattler-build (build + recipe tests)")
        try:
            results = rattler.build(root, root / pkg.recipe_dir, channel, [workdir / "stand-ins"],
                                    overrides=overrides, skip_existing=args.skip_existing,
                                    log=workdir / f"{pkg.dir.replace('/', '_')}.log",
                                    echo=args.verbose)
        except Exception as exc:  # rattler-build's error: build or test failed
            entry["build"] = f"FAILED: {exc}"
            log = workdir / (pkg.dir.replace("/", "_") + ".log")
            tail = log.read_text(errors="replace").splitlines()[-40:] if log.is_file() else []
            say("\n".join(["   " + line for line in tail]))
            say(f"   FAILED ({time.monotonic() - t0:.0f}s): {exc} (whole log: {log})")
            failed = True
            save()
            if pkg.kind == "common":
                break
            continue
        entry["build"] = "ok"
        entry["seconds"] = round(time.monotonic() - t0, 1)
        entry["built"] = [{"package": str(pkgfile), "build_string": r.build_string,
                           "variant": r.variant} for r in results for pkgfile in r.packages]
        say(f"   built and tested ({entry['seconds']}s): "
            + ", ".join(Path(x["package"]).name for x in entry["built"]))
        if pkg.kind == "op":
            entry["install"] = []
            for r in results:
                try:
                    res = _install_and_check(pkg, r, [channel, workdir / "stand-ins"], probes,
                                             workdir)
                except Exception as exc:
                    res = {"spec": r.build_string, "check": f"failed: {exc}"}
                entry["install"].append(res)  # type: ignore[union-attr]
                refused = res.get("refused") or {}
                all_refused = bool(refused) and all(v.startswith("refused") for v in refused.values())
                real_common = "aop_probe" not in str(res.get("common_chosen_with_probes"))
                failed |= res.get("check") != "ok" or not all_refused or not real_common
                if res.get("check") != "ok":
                    say(str(res.get("check_output", "")))
                say(f"   installed alone ({res.get('spec')}): ascend-ops check {pkg.name}: "
                    f"{res.get('check')}; common of another minor or ABI: "
                    f"{'refused' if all_refused else refused}; common chosen: "
                    f"{res.get('common_chosen_with_probes')}")
        save()
    report["ok"] = not failed
    save()
    say(f"ci/recipe-check: {'ok' if not failed else 'FAILED'} ({report['seconds']}s)")
    return 1 if failed else 0
