"""Session fixtures of the cross-op tests: one real ``ci/recipe-check`` run over the repository.

The run builds every package's CPU variant (framework=none, cann=none) for real with
rattler-build, runs the recipes' tests, installs each op alone; then, reusing the channel
(``--skip-existing``: common is not rebuilt), every op's ``framework=torch`` variant. The tests read its
report, its channel and its prefixes. ``AOP_RECIPE_CHECK_WORKDIR`` keeps the work directory
somewhere known (and lets a re-run reuse its packages).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ci_helpers import ROOT, recipe_check  # noqa: E402
from aop_ci.repo import WorkTree, discover  # noqa: E402


@pytest.fixture(scope="session")
def repo_packages():
    return discover(WorkTree(ROOT))


@pytest.fixture(scope="session")
def real_recipe_check(tmp_path_factory, repo_packages):
    """The report of ``ci/recipe-check`` over every package of this repository."""
    keep = os.environ.get("AOP_RECIPE_CHECK_WORKDIR")
    workdir = Path(keep) if keep else tmp_path_factory.mktemp("recipe-check")
    args = ["--skip-existing"] if keep else []
    report = recipe_check(ROOT, workdir, *args)
    report["workdir"] = str(workdir)
    return report


@pytest.fixture(scope="session")
def real_recipe_check_torch(real_recipe_check, repo_packages):
    """Every op's ``framework=torch`` variant, built into the same channel."""
    if not any(p.kind == "op" for p in repo_packages):
        pytest.skip("no op in the repository")
    workdir = Path(real_recipe_check["workdir"])
    report = recipe_check(ROOT, workdir, "--variant", "framework=torch", "--skip-existing",
                          report="report-torch.json")
    report["workdir"] = str(workdir)
    return report
