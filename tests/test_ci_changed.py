"""ci/changed: which packages a git range touches (toy monorepos and this repository)."""

from __future__ import annotations

import json

import pytest

from ci_helpers import ROOT, commit_all, git, make_toy_repo, run_ci

TOY_COMMON = "ascend-op-common"
TOY_OPS = ["ascend-op-alpha-op", "ascend-op-toy-op"]


@pytest.fixture()
def toy(tmp_path):
    repo = make_toy_repo(tmp_path / "toy", extra_ops=["alpha_op"])
    base = git(repo, "rev-parse", "HEAD").strip()
    return repo, base


def changed(repo, *args):
    proc = run_ci("changed", "--root", repo, *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def edit(repo, rel, text="\n# edited\n"):
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)


def test_help():
    proc = run_ci("changed", "--help")
    assert proc.returncode == 0
    assert "common/ touches every op" in " ".join(proc.stdout.split())


def test_one_op_change_lists_only_that_op(toy):
    repo, base = toy
    edit(repo, "ops/toy_op/python/ascend_ops/toy_op/__init__.py")
    commit_all(repo, "toy_op only")
    out = changed(repo, f"{base}...HEAD")
    assert out["packages"] == ["ascend-op-toy-op"]
    assert out["direct"] == ["ascend-op-toy-op"]
    assert out["matrix"] == {"include": [{
        "package": "ascend-op-toy-op", "kind": "op", "dir": "ops/toy_op", "op": "toy_op",
        "version": "0.1.0", "recipe": "ops/toy_op/recipe", "tag": "ascend-op-toy-op-v0.1.0"}]}
    assert out["any"] is True and out["infra"] is False


def test_common_change_lists_every_package_common_first(toy):
    repo, base = toy
    edit(repo, "common/include/ascend_ops/version.h", "\n// comment\n")
    commit_all(repo, "common")
    out = changed(repo, f"{base}...HEAD")
    assert out["packages"] == [TOY_COMMON, *TOY_OPS]
    assert out["direct"] == [TOY_COMMON]
    assert out["reasons"]["ascend-op-toy-op"] == [f"(through {TOY_COMMON})"]


def test_docs_only_change_touches_nothing(toy):
    repo, base = toy
    edit(repo, "ops/toy_op/README.md")
    edit(repo, "common/CHANGELOG.md")
    edit(repo, "docs/index.md")
    edit(repo, "docs/images/diagram.svg", "<svg/>")
    commit_all(repo, "docs")
    out = changed(repo, f"{base}...HEAD")
    assert out["packages"] == [] and out["any"] is False and out["matrix"] == {"include": []}
    assert out["infra"] is False
    assert len(out["docs_files"]) == 4


def test_channel_config_touches_every_package(toy):
    repo, base = toy
    edit(repo, "recipes/variants.yaml")
    commit_all(repo, "variants")
    assert changed(repo, f"{base}...HEAD")["packages"] == [TOY_COMMON, *TOY_OPS]


def test_ci_change_is_infra_not_a_package(toy):
    repo, base = toy
    edit(repo, "ci/README")
    commit_all(repo, "ci")
    out = changed(repo, f"{base}...HEAD")
    assert out["packages"] == [] and out["infra"] is True and out["infra_files"] == ["ci/README"]


def test_new_and_removed_ops(toy):
    repo, base = toy
    git(repo, "rm", "-rq", "ops/alpha_op")
    make_toy_repo(repo, extra_ops=["beta_op"], commit=False)
    commit_all(repo, "alpha out, beta in")
    out = changed(repo, f"{base}...HEAD")
    assert out["packages"] == ["ascend-op-beta-op"]
    assert out["removed"] == ["ops/alpha_op"]


def test_two_dot_range_and_merge_base(toy):
    repo, base = toy
    git(repo, "checkout", "-q", "-b", "feature")
    edit(repo, "ops/toy_op/CMakeLists.txt")
    commit_all(repo, "feature: toy_op")
    git(repo, "checkout", "-q", "main")
    edit(repo, "ops/alpha_op/CMakeLists.txt")
    commit_all(repo, "main moved on: alpha_op")
    # a pull request's view: from the merge base, so main's own change is not the PR's
    assert changed(repo, "main...feature")["packages"] == ["ascend-op-toy-op"]
    assert set(changed(repo, "main..feature")["packages"]) == {"ascend-op-toy-op",
                                                               "ascend-op-alpha-op"}


def test_github_output(toy, tmp_path):
    repo, base = toy
    edit(repo, "ops/toy_op/CMakeLists.txt")
    commit_all(repo, "toy_op")
    out_file = tmp_path / "github_output"
    proc = run_ci("changed", "--root", repo, f"{base}...HEAD", "--github-output",
                  env={"GITHUB_OUTPUT": str(out_file)})
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split("=", 1) for line in out_file.read_text().splitlines())
    assert lines["any"] == "true" and lines["infra"] == "false"
    assert json.loads(lines["packages"]) == ["ascend-op-toy-op"]
    assert json.loads(lines["matrix"])["include"][0]["dir"] == "ops/toy_op"


def test_bad_range_is_an_error(toy):
    repo, _ = toy
    proc = run_ci("changed", "--root", repo, "no-such-ref...HEAD")
    assert proc.returncode == 2 and "ci/changed:" in proc.stderr


def test_this_repository_by_discovery(repo_packages):
    ops = [p for p in repo_packages if p.kind == "op"]
    common = [p for p in repo_packages if p.kind == "common"]
    assert common and ops, "the repository has common and at least one op"
    for op in ops:
        out = changed(ROOT, "--files", f"{op.dir}/host/any_file.cpp")
        assert out["packages"] == [op.name]
    out = changed(ROOT, "--files", "common/src/any_file.cpp")
    assert out["packages"] == [p.name for p in repo_packages]
    assert out["packages"][0] == common[0].name
    assert changed(ROOT, "--files", "README.md", "docs/release.md")["packages"] == []
