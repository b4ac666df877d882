"""ci/build: wheels of the touched packages here; `conda build` where conda exists."""

from __future__ import annotations

import json
import os
import shutil
import stat
import zipfile
from pathlib import Path

import pytest

from ci_helpers import ROOT, commit_all, git, make_toy_repo, run_ci


def test_help():
    proc = run_ci("build", "--help")
    assert proc.returncode == 0 and "conda build" in " ".join(proc.stdout.split())


def test_needs_a_selection():
    proc = run_ci("build")
    assert proc.returncode == 2 and "say what to build" in proc.stderr


def test_dry_run_builds_common_first(repo_packages):
    proc = run_ci("build", "--all", "--dry-run", "--conda", "never", "--out", "/tmp/unused-dist")
    assert proc.returncode == 0, proc.stderr
    wheels = [line for line in proc.stdout.splitlines() if " pip wheel " in line]
    assert [line.split(" pip wheel ")[1].split()[0] for line in wheels] == [
        str(ROOT / p.dir) for p in repo_packages]
    assert all("--no-build-isolation" in w and "--no-deps" in w for w in wheels)


def test_range_builds_only_the_touched_op(tmp_path):
    repo = make_toy_repo(tmp_path / "toy", extra_ops=["alpha_op"])
    base = git(repo, "rev-parse", "HEAD").strip()
    with open(repo / "ops/alpha_op/CMakeLists.txt", "a") as fh:
        fh.write("# change\n")
    commit_all(repo, "alpha")
    proc = run_ci("build", f"{base}...HEAD", "--root", repo, "--dry-run", "--conda", "never")
    assert proc.returncode == 0, proc.stderr
    assert "ascend-op-alpha-op 0.1.0" in proc.stdout and "toy_op" not in proc.stdout


def test_wheels_are_built_for_real(tmp_path):
    repo = make_toy_repo(tmp_path / "toy")
    out = tmp_path / "dist"
    proc = run_ci("build", "--all", "--root", repo, "--out", out, "--conda", "never")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    wheels = sorted(p.name for p in (out / "wheels").glob("*.whl"))
    assert [w.split("-")[:2] for w in wheels] == [["ascend_op_common", "0.1.0"],
                                                  ["ascend_op_toy_op", "0.1.0"]]
    with zipfile.ZipFile(out / "wheels" / wheels[1]) as zf:
        assert "ascend_ops/toy_op/__init__.py" in zf.namelist()


def _fake_conda(bindir: Path, log: Path) -> None:
    bindir.mkdir(parents=True)
    conda = bindir / "conda"
    conda.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {log}\n")
    conda.chmod(conda.stat().st_mode | stat.S_IEXEC)


def test_conda_build_where_conda_exists(tmp_path, repo_packages):
    """A stand-in `conda` on PATH records the command ci/build hands to conda-build."""
    log = tmp_path / "conda-args"
    _fake_conda(tmp_path / "bin", log)
    out = tmp_path / "dist"
    op = next(p for p in repo_packages if p.kind == "op")
    env = {"PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    proc = run_ci("build", "--package", op.name, "--wheels", "no", "--conda", "always",
                  "--out", out, "--channel", "conda-forge", "--variant", "framework=torch", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    args = log.read_text().splitlines()
    assert args[:2] == ["build", str(ROOT / op.recipe_dir)]
    assert args[args.index("-m") + 1] == str(ROOT / "recipes" / "conda_build_config.yaml")
    assert args[args.index("--output-folder") + 1] == str(out / "conda")
    assert "conda-forge" in args and (out / "conda").as_uri() in args
    assert json.loads(args[args.index("--variants") + 1]) == {"framework": ["torch"]}
    assert (out / "conda" / "noarch" / "repodata.json").is_file()


@pytest.mark.skipif(shutil.which("conda") is not None, reason="conda is installed on this machine")
def test_without_conda_auto_says_so_and_always_fails(tmp_path):
    repo = make_toy_repo(tmp_path / "toy")
    proc = run_ci("build", "--all", "--root", repo, "--wheels", "no", "--out", tmp_path / "d")
    assert proc.returncode == 0 and "conda not found" in proc.stdout
    proc = run_ci("build", "--all", "--root", repo, "--wheels", "no", "--conda", "always",
                  "--out", tmp_path / "d")
    assert proc.returncode == 2 and "conda is not on PATH" in proc.stderr
