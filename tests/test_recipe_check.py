"""ci/recipe-check over this repository's real packages (one run, shared by these tests):
every recipe passes every stage, each op installs alone (with only common) into an empty prefix
and passes its recipe's tests there, and an op refuses a common of another minor or ABI.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ci_helpers import ROOT, run_ci, stage_status
from aop_ci.recipe import envs
from aop_ci.recipe.check import STAGES
from aop_ci.recipe.package import write_conda


def test_help():
    proc = run_ci("recipe-check", "--help")
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    for words in ("an emulation of conda-build", "conda-package-handling", "py-rattler",
                  "installed into an empty prefix", "stand-in packages"):
        assert words in text


def test_every_package_passes_every_stage(real_recipe_check, repo_packages):
    report = real_recipe_check
    assert set(report["packages"]) == {p.name for p in repo_packages}, "by discovery"
    failed = {name: {s: v["detail"] for s, v in pkg["stages"].items() if v["status"] != "ok"}
              for name, pkg in report["packages"].items()}
    assert report["returncode"] == 0 and not any(failed.values()), (failed, report["output"][-5000:])
    for pkg in repo_packages:
        assert stage_status(report, pkg.name) == {s: "ok" for s in STAGES}
        assert report["packages"][pkg.name]["variants"], f"{pkg.name}: nothing built"


def test_output_says_what_is_emulated(real_recipe_check):
    out = real_recipe_check["output"]
    assert "an emulation of conda-build" in out
    assert "stand-in" in out and "aop_stand_in" in out
    assert all(s["build"].startswith("aop_stand_in") for s in real_recipe_check["stand_ins"])


def _common(report, repo_packages):
    common = next(p for p in repo_packages if p.kind == "common")
    (variant,) = report["packages"][common.name]["variants"].values()
    return common, variant


def test_ops_depend_on_common_through_its_abi_pin(real_recipe_check, repo_packages):
    common, _ = _common(real_recipe_check, repo_packages)
    abi = re.search(r"#define AOP_COMMON_ABI (\d+)",
                    (ROOT / "common/include/ascend_ops/version.h").read_text()).group(1)
    major, minor = common.version.split(".")[:2]
    pin = f"{common.name} >={common.version},<{major}.{int(minor) + 1}.0a0 abi{abi}_*"
    for pkg in (p for p in repo_packages if p.kind == "op"):
        for variant in real_recipe_check["packages"][pkg.name]["variants"].values():
            assert pin in variant["depends"], variant["depends"]
            names = [d.split()[0] for d in variant["depends"]]
            assert "pytorch" not in names and "mindspore" not in names


def test_each_op_installs_alone(real_recipe_check, repo_packages):
    """The install prefix of each op holds that op, common and stand-ins -- nothing else of ours."""
    workdir = Path(real_recipe_check["workdir"])
    ours = {p.name for p in repo_packages}
    common, _ = _common(real_recipe_check, repo_packages)
    for pkg in (p for p in repo_packages if p.kind == "op"):
        for name in real_recipe_check["packages"][pkg.name]["variants"]:
            build = name[len(pkg.name) + len(pkg.version) + 2:]
            prefix = workdir / "install" / f"{pkg.name}-{build}" / "prefix"
            records = [json.loads(p.read_text()) for p in (prefix / "conda-meta").glob("*.json")]
            installed = {r["name"] for r in records}
            assert installed & ours == {pkg.name, common.name}, installed
            assert all("aop_stand_in" in r["build"] for r in records if r["name"] not in ours)
            detail = real_recipe_check["packages"][pkg.name]["stages"]["install"]["detail"]
            assert "installs alone" in detail and "refuses" in detail


def test_recipe_tests_ran_the_op_check(real_recipe_check, repo_packages):
    for pkg in (p for p in repo_packages if p.kind == "op"):
        for variant in real_recipe_check["packages"][pkg.name]["variants"].values():
            log = Path(variant["test_log"]).read_text()
            assert f"+ ascend-ops check {pkg.op}" in log and "+ pip check" in log
            assert re.search(rf"^{pkg.op}\s+cpu\s+core\s+passed", log, re.MULTILINE), log[-2000:]
            assert re.search(r"^\d+ passed, 0 failed", log, re.MULTILINE), log[-2000:]


def test_an_op_refuses_another_common(real_recipe_check, repo_packages, tmp_path):
    """Independently of recipe-check's own probe: offer a common of the next minor (same ABI)
    and one of the same minor with the next ABI; the op must solve only with the real one."""
    common, variant = _common(real_recipe_check, repo_packages)
    workdir = Path(real_recipe_check["workdir"])
    channel, standins = workdir / "channel", workdir / "stand-ins" / "channel"
    import conda_package_handling.api as cph
    cph.extract(variant["artifact"], dest_dir=str(tmp_path / "info"), components="info")
    index = json.loads((tmp_path / "info" / "info" / "index.json").read_text())
    major, minor, patch = (int(x) for x in common.version.split(".")[:3])
    abi = int(re.match(r"abi(\d+)_", index["build"]).group(1))
    others = tmp_path / "others"
    for version, build in ((f"{major}.{minor + 1}.0", f"abi{abi}_other_0"),
                           (f"{major}.{minor}.{patch + 1}", f"abi{abi + 1}_other_0")):
        stage = tmp_path / "stage" / build
        stage.mkdir(parents=True)
        write_conda(stage, [], dict(index, version=version, build=build, depends=[]),
                    others / "linux-64")
    envs.index_channel(others, "linux-64")
    cache = tmp_path / "cache"
    op = next(p for p in repo_packages if p.kind == "op")
    (op_name,) = list(real_recipe_check["packages"][op.name]["variants"])[:1]
    exact = f"{op.name} =={op.version} {op_name[len(op.name) + len(op.version) + 2:]}"
    records = envs.solve([channel, others, standins], [exact], "linux-64", cache)
    chosen = [r for r in records if r.name.normalized == common.name]
    assert [(str(r.version), str(r.build)) for r in chosen] == [(index["version"], index["build"])]
    for other in (f"{common.name} >={major}.{minor + 1}", f"{common.name} * abi{abi + 1}_*"):
        with pytest.raises(envs.SolveError):
            envs.solve([channel, others, standins], [exact, other], "linux-64", cache)


def test_torch_variant_builds_and_runs_its_adapter(real_recipe_check_torch):
    report = real_recipe_check_torch
    op = report["op"]
    assert report["returncode"] == 0, report["output"][-5000:]
    assert stage_status(report, op.name) == {s: "ok" for s in STAGES}
    variants = report["packages"][op.name]["variants"]
    (name, variant), = [(n, v) for n, v in variants.items() if v["variant"]["framework"] == "torch"]
    assert "pytorch ==2.13.0" in variant["constrains"] or any(
        c.startswith("pytorch ==") for c in variant["constrains"])
    log = Path(variant["test_log"]).read_text()
    assert re.search(rf"^{op.op}\s+cpu\s+torch eager\s+passed", log, re.MULTILINE), log[-3000:]
