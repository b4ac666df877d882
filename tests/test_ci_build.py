"""ci/build: wheels of the touched packages; conda packages built by rattler-build."""

from __future__ import annotations

import zipfile
from pathlib import Path

from ci_helpers import ROOT, commit_all, git, make_toy_repo, run_ci


def test_help():
    proc = run_ci("build", "--help")
    assert proc.returncode == 0 and "rattler-build" in " ".join(proc.stdout.split())


def test_needs_a_selection():
    proc = run_ci("build")
    assert proc.returncode == 2 and "say what to build" in proc.stderr


def test_dry_run_builds_common_first(repo_packages):
    proc = run_ci("build", "--all", "--dry-run", "--conda", "no", "--out", "/tmp/unused-dist")
    assert proc.returncode == 0, proc.stderr
    wheels = [line for line in proc.stdout.splitlines() if " pip wheel " in line]
    assert [line.split(" pip wheel ")[1].split()[0] for line in wheels] == [
        str(ROOT / p.dir) for p in repo_packages]
    assert all("--no-build-isolation" in w and "--no-deps" in w for w in wheels)
    assert all("cmake.define.AOP_WITH_NPU_SIM=OFF" in w for w in wheels)  # never in a release wheel


def test_range_builds_only_the_touched_op(tmp_path):
    repo = make_toy_repo(tmp_path / "toy", extra_ops=["alpha_op"])
    base = git(repo, "rev-parse", "HEAD").strip()
    with open(repo / "ops/alpha_op/CMakeLists.txt", "a") as fh:
        fh.write("# change\n")
    commit_all(repo, "alpha")
    proc = run_ci("build", f"{base}...HEAD", "--root", repo, "--dry-run", "--conda", "no")
    assert proc.returncode == 0, proc.stderr
    assert "ascend-op-alpha-op 0.1.0" in proc.stdout and "toy_op" not in proc.stdout


def test_wheels_are_built_for_real(tmp_path):
    repo = make_toy_repo(tmp_path / "toy")
    out = tmp_path / "dist"
    proc = run_ci("build", "--all", "--root", repo, "--out", out, "--conda", "no")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    wheels = sorted(p.name for p in (out / "wheels").glob("*.whl"))
    assert [w.split("-")[:2] for w in wheels] == [["ascend_op_common", "0.1.0"],
                                                  ["ascend_op_toy_op", "0.1.0"]]
    with zipfile.ZipFile(out / "wheels" / wheels[1]) as zf:
        assert "ascend_ops/toy_op/__init__.py" in zf.namelist()


def test_conda_dry_run_says_what_rattler_build_builds(tmp_path, repo_packages):
    op = next(p for p in repo_packages if p.kind == "op")
    proc = run_ci("build", "--package", op.name, "--wheels", "no", "--conda", "yes", "--dry-run",
                  "--out", tmp_path / "dist", "--channel", "conda-forge", "--variant",
                  "framework=torch")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("+ rattler-build"))
    assert str(ROOT / op.recipe_dir) in line and "recipes/variants.yaml" in line
    assert "'framework': ['torch']" in line and "conda-forge" in line


def test_conda_dry_run_with_conda_build_says_its_command(tmp_path, repo_packages):
    """The release workflow's builder: conda-build on the same recipe and variants file, the
    restricted keys in a variants file of their own, stacked after it."""
    op = next(p for p in repo_packages if p.kind == "op")
    proc = run_ci("build", "--package", op.name, "--wheels", "no", "--conda", "yes", "--dry-run",
                  "--builder", "conda-build", "--out", tmp_path / "dist", "--channel", "conda-forge",
                  "--variant", "framework=torch")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("+ conda-build "))
    words = line.split()
    assert words[2] == str(ROOT / op.recipe_dir)
    variant_files = [words[i + 1] for i, w in enumerate(words) if w == "-m"]
    assert variant_files[0] == str(ROOT / "recipes" / "variants.yaml")
    assert (tmp_path / "dist" / "variant-restrict.yaml").read_text() == 'framework: ["torch"]\n'
    assert variant_files[1] == str(tmp_path / "dist" / "variant-restrict.yaml")
    assert "-c conda-forge" in line and f"--output-folder {tmp_path / 'dist' / 'conda'}" in line


def test_conda_packages_are_built_by_rattler_build(tmp_path):
    """ci/build --conda yes on the toy, against the stand-ins channel ci/recipe-check makes."""
    from aop_ci.recipe import standins
    repo = make_toy_repo(tmp_path / "toy")
    ctx = standins.make_channel(tmp_path / "work", repo)
    machine = [f"--variant={k}={v[0]}" for k, v in standins.compiler_overrides(ctx).items()]
    out = tmp_path / "dist"
    proc = run_ci("build", "--all", "--root", repo, "--wheels", "no", "--conda", "yes",
                  "--out", out, "--channel", tmp_path / "work" / "stand-ins",
                  "--variant", "framework=none", "--variant", "cann=none", *machine)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    built = sorted(p.name for p in (out / "conda").glob("*/*.conda"))
    assert [b.split("-0.1.0-")[0] for b in built] == ["ascend-op-common", "ascend-op-toy-op"]
    assert "all tests passed" in proc.stdout
