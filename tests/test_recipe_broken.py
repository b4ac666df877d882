"""ci/recipe-check end to end on a toy monorepo carrying the real recipes (copied in): the sound
toy is built, tested, installed and checked by the real tools; broken copies fail where the
real tools say they fail. The toy builds in seconds; the real packages go through the same run
in test_recipe_check.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_helpers import make_toy_repo, recipe_check, replace_in, set_recipe_context

COMMON, OP = "ascend-op-common", "ascend-op-toy-op"
OP_RECIPE = "ops/toy_op/recipe/recipe.yaml"


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    base = tmp_path_factory.mktemp("toy-baseline")
    repo = make_toy_repo(base / "repo")
    return repo, base / "work", recipe_check(repo, base / "work")


def test_sound_toy_is_built_tested_installed_and_checked(baseline):
    _, work, report = baseline
    assert report["returncode"] == 0 and report["ok"], report["output"][-4000:]
    assert report["packages"][COMMON]["build"] == "ok"
    (install,) = report["packages"][OP]["install"]
    assert install["check"] == "ok"
    assert all(v.startswith("refused") for v in install["refused"].values())
    assert len(install["refused"]) == 2
    data = json.loads((work / "channel" / "linux-64" / "repodata.json").read_text())
    op = next(r for r in data["packages.conda"].values() if r["name"] == OP)
    assert "ascend-op-common >=0.1.0,<0.2.0a0 abi1_*" in op["depends"]


def test_an_undeclared_run_dependency_fails_the_recipe_tests(tmp_path):
    """The op imports pybind11 at run time without declaring it: it is in the build's host
    environment, but not in rattler-build's test environment, so the import test fails."""
    init = "ops/toy_op/python/ascend_ops/toy_op/__init__.py"
    repo = make_toy_repo(tmp_path / "repo", edit=lambda d: replace_in(
        d / init, "import numpy as np\n", "import numpy as np\nimport pybind11  # undeclared\n"))
    report = recipe_check(repo, tmp_path / "work")
    assert report["returncode"] == 1
    assert report["packages"][COMMON]["build"] == "ok"
    assert report["packages"][OP]["build"].startswith("FAILED"), report["packages"][OP]
    log = (tmp_path / "work" / "ops_toy_op.log").read_text()
    assert "No module named 'pybind11'" in log


def test_the_abi_comes_from_version_h(tmp_path):
    """Bumping AOP_COMMON_ABI (version.h, and the recipe's literal that ci/check-release keeps
    equal to it) changes common's build string and the ops' pin."""
    def bump_abi(d):
        replace_in(d / "common/include/ascend_ops/version.h", "AOP_COMMON_ABI 1", "AOP_COMMON_ABI 7")
        set_recipe_context(d / "common/recipe/recipe.yaml", abi="7")

    repo = make_toy_repo(tmp_path / "repo", edit=bump_abi)
    report = recipe_check(repo, tmp_path / "work")
    assert report["returncode"] == 0, report["output"][-4000:]
    data = json.loads((tmp_path / "work" / "channel" / "linux-64" / "repodata.json").read_text())
    recs = {r["name"]: r for r in data["packages.conda"].values()}
    assert recs[COMMON]["build"].startswith("abi7_")
    assert "ascend-op-common >=0.1.0,<0.2.0a0 abi7_*" in recs[OP]["depends"]
    refused = report["packages"][OP]["install"][0]["refused"]
    assert any("abi8_" in s for s in refused) and all(v.startswith("refused") for v in refused.values())


def test_build_failure_is_reported(tmp_path):
    repo = make_toy_repo(tmp_path / "repo", edit=lambda d: Path(d / "ops/toy_op/CMakeLists.txt")
                         .write_text("cmake_minimum_required(VERSION 3.24)\nmessage(FATAL_ERROR boom)\n"))
    report = recipe_check(repo, tmp_path / "work")
    assert report["returncode"] == 1
    assert report["packages"][OP]["build"].startswith("FAILED")
    assert "boom" in (tmp_path / "work" / "ops_toy_op.log").read_text()
