"""ci/recipe-check end to end on a toy monorepo carrying the real recipes: a sound toy passes
every stage, and each deliberately broken copy fails the stage it should -- and only from there.

The toy builds in seconds; the real packages go through the same stages in
test_recipe_check.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from ci_helpers import make_toy_repo, recipe_check, replace_in, stage_status
from aop_ci.recipe import envs
from aop_ci.recipe.check import STAGES

COMMON, OP = "ascend-op-common", "ascend-op-toy-op"
OP_RECIPE = "ops/toy_op/recipe/meta.yaml"


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    base = tmp_path_factory.mktemp("toy-baseline")
    repo = make_toy_repo(base / "repo")
    report = recipe_check(repo, base / "work")
    return repo, base / "work", report


def run_broken(tmp_path, baseline, edit, *args):
    """A toy with ``edit`` applied, checked with common's package reused from the baseline."""
    repo = make_toy_repo(tmp_path / "repo", edit=edit)
    work = tmp_path / "work"
    channel = work / "channel" / "linux-64"
    channel.mkdir(parents=True)
    for pkg in (baseline[1] / "channel" / "linux-64").glob(f"{COMMON}-*.conda"):
        shutil.copy2(pkg, channel / pkg.name)
    return recipe_check(repo, work, "--skip-existing", *args)


def assert_fails_at(report, stage, package=OP):
    status = stage_status(report, package)
    assert report["returncode"] == 1, report["output"][-3000:]
    before = STAGES[:STAGES.index(stage)]
    assert all(status[s] == "ok" for s in before if s in status), status
    assert status[stage] == "failed", (status, report["output"][-3000:])
    after = STAGES[STAGES.index(stage) + 1:]
    assert all(status[s] == "skipped" for s in after if s in status), status
    assert stage_status(report, COMMON) == {s: "ok" for s in STAGES}, "common is unaffected"
    return report["packages"][package]["stages"][stage]["detail"]


def test_sound_toy_passes_every_stage(baseline):
    repo, work, report = baseline
    assert report["returncode"] == 0, report["output"][-3000:]
    for name in (COMMON, OP):
        assert stage_status(report, name) == {s: "ok" for s in STAGES}
    assert "an emulation of conda-build" in report["output"]
    assert "stand-in" in report["output"]
    install = report["packages"][OP]["stages"]["install"]["detail"]
    assert "installs alone: ascend-op-common 0.1.0, ascend-op-toy-op 0.1.0" in install
    assert "refuses ascend-op-common >=0.2 and ascend-op-common * abi2_*" in install


def _conda_info(artifact: Path, dest: Path) -> Path:
    import conda_package_handling.api as cph
    cph.extract(str(artifact), dest_dir=str(dest), components="info")
    return dest / "info"


def test_sound_toy_packages(baseline, tmp_path):
    _, work, report = baseline
    variants = report["packages"][OP]["variants"]
    (op,) = variants.values()
    assert "ascend-op-common >=0.1.0,<0.2.0a0 abi1_*" in op["depends"]
    assert not any(d.split()[0] in ("pytorch", "mindspore") for d in op["depends"])
    (common,) = report["packages"][COMMON]["variants"].values()
    info = _conda_info(Path(common["artifact"]), tmp_path / "common")
    assert json.loads((info / "run_exports.json").read_text()) == {
        "weak": ["ascend-op-common >=0.1.0,<0.2.0a0 abi1_*"]}
    has_prefix = (info / "has_prefix").read_text()
    assert "text bin/ascend-ops" in has_prefix  # pip's console script: rewritten on install
    assert (info / "test" / "run_test.sh").read_text().count("ascend-ops") >= 1
    # the installed copy's shebang names the install prefix, not the build prefix
    (prefix,) = (work / "install").glob(f"{COMMON}-*/prefix")
    script = (prefix / "bin" / "ascend-ops").read_text()
    assert str(prefix) in script and "_h_env_placehold" not in script


def test_test_prefix_sees_only_what_was_installed(baseline):
    _, work, _ = baseline
    (prefix,) = (work / "install").glob(f"{OP}-*/prefix")  # the alone-install prefix, tested in place
    python = prefix / "bin" / "python"
    ok = subprocess.run([str(python), "-c", "import ascend_ops.toy_op, numpy"], capture_output=True)
    assert ok.returncode == 0, ok.stderr
    for absent in ("torch", "mindspore", "scikit_build_core"):  # in the dev venv, not installed here
        proc = subprocess.run([str(python), "-c", f"import {absent}"], capture_output=True)
        assert proc.returncode != 0, f"{absent} leaked into the test prefix"


def test_render_failure(tmp_path, baseline):
    def edit(repo):
        replace_in(repo / OP_RECIPE, "{% set op =", "{{ no_such_variable }}\n{% set op =")
    detail = assert_fails_at(run_broken(tmp_path, baseline, edit), "render")
    assert "no_such_variable" in detail


def test_lint_failure(tmp_path, baseline):
    def edit(repo):
        replace_in(repo / OP_RECIPE, "  run:\n    - python\n", "  run:\n    - python\n    - ascend-op-common\n")
    detail = assert_fails_at(run_broken(tmp_path, baseline, edit), "lint")
    assert "[op-common]" in detail


def test_build_failure(tmp_path, baseline):
    def edit(repo):
        with open(repo / "ops/toy_op/CMakeLists.txt", "a") as fh:
            fh.write('message(FATAL_ERROR "toy op: deliberately broken")\n')
    report = run_broken(tmp_path, baseline, edit)
    detail = assert_fails_at(report, "build")
    assert "build script exited with" in detail
    assert "deliberately broken" in report["output"]  # the log's tail is shown


def test_build_needs_common_in_the_host_prefix(tmp_path, baseline):
    """Without common in host (lint skipped, which would say so) the op's CMake cannot find it:
    the host prefix holds what the recipe asks for, not what the developer's venv has."""
    def edit(repo):
        replace_in(repo / OP_RECIPE, "    - ascend-op-common\n", "")
    report = run_broken(tmp_path, baseline, edit, "--stages", "render,build,package,index,install,test")
    status = stage_status(report, OP)
    assert status["build"] == "failed" and report["returncode"] == 1
    assert "ascend_ops.common is not importable" in report["output"]


def test_package_failure_editable_install(tmp_path, baseline):
    def edit(repo):
        replace_in(repo / "ops/toy_op/recipe/build.sh", '-m pip install . ', '-m pip install -e . ')
    detail = assert_fails_at(run_broken(tmp_path, baseline, edit), "package")
    assert "work directory" in detail


def test_install_failure_unsolvable_run_dependency(tmp_path, baseline):
    def edit(repo):
        replace_in(repo / OP_RECIPE, "    - numpy >=1.22,<2\n", "    - numpy >=2\n")
        replace_in(repo / "ops/toy_op/pyproject.toml", '"numpy>=1.22,<2"', '"numpy>=2"')
    detail = assert_fails_at(run_broken(tmp_path, baseline, edit), "install")
    assert "does not solve alone" in detail and "numpy" in detail


def test_test_failure_undeclared_dependency(tmp_path, baseline):
    """The op imports jinja2 (installed in the developer's venv) but declares it nowhere."""
    def edit(repo):
        replace_in(repo / "ops/toy_op/python/ascend_ops/toy_op/__init__.py",
                   "import numpy as np\n", "import jinja2\nimport numpy as np\n")
    report = run_broken(tmp_path, baseline, edit)
    assert_fails_at(report, "test")
    assert "No module named 'jinja2'" in report["output"]


def test_other_common_minor_is_refused(tmp_path, baseline):
    """A real second common (0.2.0, ABI 2) in the channel: the op built against 0.1 refuses it."""
    repo, work, report = baseline
    channel = tmp_path / "work" / "channel"
    shutil.copytree(work / "channel", channel)

    def edit(r):
        replace_in(r / "common/include/ascend_ops/version.h", '"0.1.0"', '"0.2.0"')
        replace_in(r / "common/include/ascend_ops/version.h", "AOP_COMMON_ABI 1", "AOP_COMMON_ABI 2")
    newer = recipe_check(make_toy_repo(tmp_path / "repo", edit=edit), tmp_path / "work",
                         "--package", COMMON, "--skip-existing")
    assert newer["returncode"] == 0, newer["output"][-3000:]
    assert len(list((channel / "linux-64").glob(f"{COMMON}-*.conda"))) == 2
    standins = Path(newer["stand_in_channel"])
    (op,) = report["packages"][OP]["variants"].values()
    op_name = Path(op["artifact"]).name[:-len(".conda")]
    version, build = op_name[len(OP) + 1:].split("-", 1)
    exact = f"{OP} =={version} {build}"
    cache = tmp_path / "cache"
    records = envs.solve([channel, standins], [exact], "linux-64", cache)
    common = [r for r in records if r.name.normalized == COMMON]
    assert [str(r.version) for r in common] == ["0.1.0"]
    with pytest.raises(envs.SolveError, match="ascend-op-common"):
        envs.solve([channel, standins], [exact, "ascend-op-common >=0.2"], "linux-64", cache)
    records = envs.solve([channel, standins], ["ascend-op-common"], "linux-64", cache)
    assert [str(r.version) for r in records if r.name.normalized == COMMON] == ["0.2.0"]
