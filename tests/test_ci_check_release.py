"""ci/check-release: version bumps, changelog entries and tags, on toy monorepos."""

from __future__ import annotations

import json
import re

import pytest

from ci_helpers import ROOT, commit_all, git, make_toy_repo, replace_in, run_ci

OP_VERSION = "ops/toy_op/python/ascend_ops/toy_op/_version.py"
OP_CHANGELOG = "ops/toy_op/CHANGELOG.md"
OP_RECIPE = "ops/toy_op/recipe/recipe.yaml"
COMMON_VERSION = "common/include/ascend_ops/version.h"
COMMON_RECIPE = "common/recipe/recipe.yaml"


@pytest.fixture()
def toy(tmp_path):
    repo = make_toy_repo(tmp_path / "toy", extra_ops=["alpha_op"])
    return repo, git(repo, "rev-parse", "HEAD").strip()


def check(repo, *args):
    return run_ci("check-release", "--root", repo, *args)


def bump_op(repo, version="0.1.1", changelog="- Faster.\n", recipe=True):
    replace_in(repo / OP_VERSION, '"0.1.0"', f'"{version}"')
    if recipe:
        replace_in(repo / OP_RECIPE, 'version: "0.1.0"', f'version: "{version}"')
    if changelog is not None:
        replace_in(repo / OP_CHANGELOG, "## 0.1.0", f"## {version}\n{changelog}\n## 0.1.0")


def touch_op(repo):
    with open(repo / "ops/toy_op/CMakeLists.txt", "a", encoding="utf-8") as fh:
        fh.write("# a change\n")


def test_help():
    proc = run_ci("check-release", "--help")
    assert proc.returncode == 0 and "CHANGELOG.md" in proc.stdout and "--tag" in proc.stdout


def test_change_without_bump_fails(toy):
    repo, base = toy
    touch_op(repo)
    commit_all(repo, "change, no bump")
    proc = check(repo, f"{base}...HEAD")
    assert proc.returncode == 1
    assert "FAIL ascend-op-toy-op 0.1.0 -> 0.1.0" in proc.stdout
    assert "version not bumped" in proc.stdout
    assert "alpha-op" not in proc.stdout  # only the touched package is asked


def test_bump_without_changelog_entry_fails(toy):
    repo, base = toy
    touch_op(repo)
    bump_op(repo, changelog=None)
    commit_all(repo, "bump only")
    proc = check(repo, f"{base}...HEAD")
    assert proc.returncode == 1 and "has no '## 0.1.1' section" in proc.stdout


def test_empty_changelog_section_fails(toy):
    repo, base = toy
    touch_op(repo)
    bump_op(repo, changelog="")
    commit_all(repo, "empty entry")
    proc = check(repo, f"{base}...HEAD")
    assert proc.returncode == 1 and "section is empty" in proc.stdout


def test_bump_with_changelog_passes(toy):
    repo, base = toy
    touch_op(repo)
    bump_op(repo)
    commit_all(repo, "release toy_op 0.1.1")
    proc = check(repo, f"{base}...HEAD", "--json")
    assert proc.returncode == 0, proc.stdout
    (verdict,) = json.loads(proc.stdout)
    assert verdict["package"] == "ascend-op-toy-op" and verdict["ok"]
    assert (verdict["base_version"], verdict["version"]) == ("0.1.0", "0.1.1")
    assert verdict["tag"] == "ascend-op-toy-op-v0.1.1"


def test_lower_version_fails(toy):
    repo, base = toy
    bump_op(repo, version="0.0.9")
    commit_all(repo, "downgrade")
    proc = check(repo, f"{base}...HEAD")
    assert proc.returncode == 1 and "0.1.0 at base, 0.0.9 now" in proc.stdout


def test_existing_tag_fails(toy):
    repo, base = toy
    touch_op(repo)
    bump_op(repo)
    commit_all(repo, "release")
    git(repo, "tag", "ascend-op-toy-op-v0.1.1")
    proc = check(repo, f"{base}...HEAD")
    assert proc.returncode == 1 and "already exists" in proc.stdout


def test_docs_only_change_needs_no_release(toy):
    repo, base = toy
    with open(repo / "ops/toy_op/README.md", "a", encoding="utf-8") as fh:
        fh.write("more words\n")
    commit_all(repo, "docs")
    proc = check(repo, f"{base}...HEAD")
    assert proc.returncode == 0 and "nothing to release" in proc.stdout


def test_bump_without_the_recipe_fails(toy):
    repo, base = toy
    touch_op(repo)
    bump_op(repo, recipe=False)
    commit_all(repo, "release toy_op 0.1.1, recipe forgotten")
    proc = check(repo, f"{base}...HEAD")
    assert proc.returncode == 1
    assert ("ops/toy_op/recipe/recipe.yaml: context version is '0.1.0', but "
            "ops/toy_op/python/ascend_ops/toy_op/_version.py says '0.1.1'") in proc.stdout


def test_common_patch_asks_only_common(toy):
    repo, base = toy
    replace_in(repo / COMMON_VERSION, '"0.1.0"', '"0.1.1"')
    replace_in(repo / COMMON_RECIPE, 'version: "0.1.0"', 'version: "0.1.1"')
    replace_in(repo / "common/CHANGELOG.md", "## 0.1.0", "## 0.1.1\n- Fix.\n\n## 0.1.0")
    commit_all(repo, "common 0.1.1")
    proc = check(repo, f"{base}...HEAD", "--json")
    assert proc.returncode == 0, proc.stdout
    assert [v["package"] for v in json.loads(proc.stdout)] == ["ascend-op-common"]


def test_common_minor_asks_every_op(toy):
    repo, base = toy
    replace_in(repo / COMMON_VERSION, '"0.1.0"', '"0.2.0"')
    replace_in(repo / COMMON_RECIPE, 'version: "0.1.0"', 'version: "0.2.0"')
    replace_in(repo / "common/CHANGELOG.md", "## 0.1.0", "## 0.2.0\n- New ABI.\n\n## 0.1.0")
    commit_all(repo, "common 0.2.0")
    proc = check(repo, f"{base}...HEAD", "--json")
    assert proc.returncode == 1
    verdicts = {v["package"]: v for v in json.loads(proc.stdout)}
    assert set(verdicts) == {"ascend-op-common", "ascend-op-alpha-op", "ascend-op-toy-op"}
    assert verdicts["ascend-op-common"]["ok"]
    assert "crosses its run_exports pin" in verdicts["ascend-op-toy-op"]["why"]
    assert not verdicts["ascend-op-toy-op"]["ok"]


def test_new_package_needs_only_a_changelog(toy):
    repo, base = toy
    make_toy_repo(repo, extra_ops=["gamma_op"], commit=False)
    commit_all(repo, "gamma_op")
    proc = check(repo, f"{base}...HEAD")
    assert proc.returncode == 0, proc.stdout
    assert "ok   ascend-op-gamma-op new -> 0.1.0" in proc.stdout


def test_tag_mode(toy, tmp_path):
    repo, _ = toy
    notes = tmp_path / "notes.md"
    out = tmp_path / "github_output"
    proc = run_ci("check-release", "--root", repo, "--tag", "ascend-op-toy-op-v0.1.0",
                  "--notes-file", notes, "--github-output", env={"GITHUB_OUTPUT": str(out)})
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    assert (info["package"], info["dir"], info["version"]) == ("ascend-op-toy-op", "ops/toy_op", "0.1.0")
    assert notes.read_text().strip() == "- First toy release."
    lines = dict(line.split("=", 1) for line in out.read_text().splitlines())
    assert lines["recipe"] == "ops/toy_op/recipe" and lines["op"] == "toy_op"


@pytest.mark.parametrize("tag, message", [
    ("ascend-op-toy-op-v0.2.0", "says 0.1.0, not 0.2.0"),
    ("ascend-op-nope-v0.1.0", "no package 'ascend-op-nope'"),
    ("toy-op-0.1.0", "is not <package>-v<version>"),
])
def test_bad_tags_fail(toy, tag, message):
    repo, _ = toy
    proc = check(repo, "--tag", tag)
    assert proc.returncode == 1 and message in proc.stderr


def test_this_repository_tags():
    """Each committed package's current tag checks out against HEAD, exactly when HEAD's
    changelog has an entry for that version (common/CHANGELOG.md may not exist yet)."""
    from aop_ci.release import changelog_section
    from aop_ci.repo import GitTree, discover
    head = GitTree(ROOT, "HEAD")
    for pkg in discover(head):
        proc = run_ci("check-release", "--root", ROOT, "--tag", pkg.tag)
        text = head.read(pkg.changelog)
        if text is not None and changelog_section(text, pkg.version):
            assert proc.returncode == 0, proc.stderr
            assert json.loads(proc.stdout)["version"] == pkg.version
        else:
            assert proc.returncode == 1 and "CHANGELOG.md" in proc.stderr


def test_pin_places_match_common_recipe():
    """check-release asks every op for a bump exactly when common crosses its run_exports pin."""
    from aop_ci.release import PIN_PLACES
    recipe = (ROOT / "common" / "recipe" / "recipe.yaml").read_text()
    m = re.search(r"pin_subpackage\([^)]*upper_bound=[\"']([x.]+)[\"']", recipe)
    assert m, "common's run_exports pin_subpackage(..., upper_bound=...) not found"
    assert len(m.group(1).split(".")) == PIN_PLACES
