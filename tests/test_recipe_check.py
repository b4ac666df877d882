"""ci/recipe-check over the real packages (the session fixture's run): real ``.conda`` packages
built by rattler-build, their recipe tests run by it, each op installed alone by py-rattler,
``ascend-ops check <package>`` (every op it ships) run there, and a common of another minor or ABI refused."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

from ci_helpers import run_ci


def _repodata(report) -> dict:
    data = json.loads((Path(report["workdir"]) / "channel" / "linux-64" / "repodata.json").read_text())
    return data["packages.conda"]


def _abi() -> str:
    from ci_helpers import ROOT
    text = (ROOT / "common/include/ascend_ops/version.h").read_text()
    return re.search(r"#define AOP_COMMON_ABI (\d+)", text).group(1)


def test_help():
    proc = run_ci("recipe-check", "--help")
    assert proc.returncode == 0
    assert "rattler-build" in proc.stdout and "stand-ins" in proc.stdout


def test_every_package_is_built_and_tested_by_rattler_build(real_recipe_check, repo_packages):
    report = real_recipe_check
    assert report["returncode"] == 0 and report["ok"], report["output"][-4000:]
    for pkg in repo_packages:
        entry = report["packages"][pkg.name]
        assert entry["build"] == "ok" and entry["version"] == pkg.version
        for built in entry["built"]:
            path = Path(built["package"])
            assert path.name.startswith(f"{pkg.name}-{pkg.version}-") and path.suffix == ".conda"
            with zipfile.ZipFile(path) as zf:  # the .conda format: metadata + two tar.zst
                names = zf.namelist()
            assert "metadata.json" in names and any(n.startswith("pkg-") for n in names)
    # rattler-build ran the recipes' tests (imports + pip check, then the commands)
    logs = {p.name: p.read_text() for p in Path(report["workdir"]).glob("*.log")}
    common_log = logs["common.log"]
    assert "pip check passed" in common_log and "+ ascend-ops list" in common_log
    for pkg in repo_packages:
        if pkg.kind == "op":
            log = logs[pkg.dir.replace("/", "_") + ".log"]
            assert f"+ ascend-ops check {pkg.name}" in log and "all tests passed" in log
        elif pkg.kind in ("devkit", "integration"):  # noarch python: imports and pip check
            log = logs[pkg.dir + ".log"]
            assert "pip check passed" in log and "all tests passed" in log, log[-2000:]
    assert "+ ascend-ops demo --help" in logs["integration.log"]


def test_stand_ins_are_named_and_listed(real_recipe_check):
    stand_ins = real_recipe_check["stand_ins"]
    names = {re.match(r"(.+)-[^-]+-[^-]+\.conda$", s).group(1) for s in stand_ins}
    assert {"python", "pip", "numpy", "scikit-build-core", "pybind11", "cmake", "ninja",
            "gcc_linux-64", "gxx_linux-64", "sysroot_linux-64", "pytorch"} <= names
    assert all("aop_stand_in" in s for s in stand_ins)
    assert not any(s.startswith("ascend-op") for s in stand_ins), "ours are never stood in for"
    assert "stand-ins" in real_recipe_check["output"]


def test_common_build_string_and_abi_pin(real_recipe_check, repo_packages):
    records = _repodata(real_recipe_check)
    common = next(p for p in repo_packages if p.kind == "common")
    major, minor = common.version.split(".")[:2]
    pin = f"ascend-op-common >={common.version},<{major}.{int(minor) + 1}.0a0 abi{_abi()}_*"
    for name, rec in records.items():
        if rec["name"] == common.name:
            assert rec["build"].startswith(f"abi{_abi()}_py311h")
        elif rec["name"] == "ascend-op-devkit":  # noarch python: common's minor, not its build
            assert f"ascend-op-common {major}.{minor}.*" in rec["depends"], (name, rec["depends"])
        elif rec["name"].startswith("ascend-op-"):
            assert pin in rec["depends"], (name, rec["depends"])
            # numpy unbounded: numpy < 2 is a constraint of the MindSpore variants only
            assert "numpy >=1.22" in rec["depends"], (name, rec["depends"])
            assert "numpy <2" not in rec.get("constrains", []), (name, rec.get("constrains"))


def test_each_op_installs_alone_and_checks(real_recipe_check, repo_packages):
    for pkg in repo_packages:
        if pkg.kind != "op":
            continue
        installs = real_recipe_check["packages"][pkg.name]["install"]
        assert installs, pkg.name
        for res in installs:
            assert res["check"] == "ok", res
            ours = sorted(s.rsplit("-", 2)[0] for s in res["solved"] if s.startswith("ascend-op"))
            assert ours == sorted(["ascend-op-common", pkg.name]), res["solved"]
            assert Path(res["prefix"], "conda-meta").is_dir()


def test_an_op_refuses_another_common(real_recipe_check, repo_packages):
    common = next(p for p in repo_packages if p.kind == "common")
    major, minor = common.version.split(".")[:2]
    for pkg in repo_packages:
        if pkg.kind != "op":
            continue
        for res in real_recipe_check["packages"][pkg.name]["install"]:
            refused = res["refused"]
            assert any(f"=={major}.{int(minor) + 1}.0 " in s for s in refused), refused
            assert any(f"abi{int(_abi()) + 1}_" in s for s in refused), refused
            assert all(v.startswith("refused") for v in refused.values()), refused
            assert res["common_chosen_with_probes"] == f"{common.version}-" + next(
                r["build"] for r in _repodata(real_recipe_check).values()
                if r["name"] == common.name)


def test_torch_variants_build_and_run_their_adapter(real_recipe_check_torch, repo_packages):
    report = real_recipe_check_torch
    assert report["returncode"] == 0, report["output"][-4000:]
    records = _repodata(report)
    for op in (p for p in repo_packages if p.kind == "op"):
        entry = report["packages"][op.name]
        assert [b["build_string"].split("_")[:2] for b in entry["built"]] == [["torch", "cpu"]]
        rec = next(r for r in records.values()
                   if r["name"] == op.name and r["build"].startswith("torch_cpu"))
        assert "pytorch ==2.13.0" in rec.get("constrains", [])
        assert not any(d.startswith("pytorch") for d in rec["depends"]), "torch stays optional"
        for res in entry["install"]:
            assert res["check"] == "ok" and res["with"] == ["pytorch"], res
            assert any(s.startswith("pytorch-") for s in res["solved"])
            assert re.search(r"cpu\s+torch eager\s+passed", res["check_output"]), res["check_output"]
