"""ci/packages (./dev packages): its command line, and what it says without conda-build. The
build-and-install run itself is ./dev packages, which .ci/run runs after ./dev test."""

from __future__ import annotations

import os
import stat

from ci_helpers import run_ci


def test_help():
    proc = run_ci("packages", "--help")
    assert proc.returncode == 0
    assert "conda-build" in proc.stdout and "conda install" in proc.stdout


def test_without_conda_build_it_says_so(tmp_path):
    proc = run_ci("packages", env={"PATH": str(tmp_path)})  # no conda-build on this PATH
    assert proc.returncode == 2 and "no conda-build" in proc.stderr


def test_conda_python_is_the_interpreter_conda_build_runs_under(tmp_path):
    from aop_ci.packages import conda_python

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "conda-build"
    script.write_text("#!/opt/conda/bin/python3.11 -s\nimport conda_build\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    assert str(conda_python(script)) == "/opt/conda/bin/python3.11"  # the shebang's
    os.symlink("/usr/bin/python3", bin_dir / "python")
    assert conda_python(script) == bin_dir / "python"  # a venv's neighbour wins


def _fake_conda_build(tmp_path):
    script = tmp_path / "bin" / "conda-build"
    script.parent.mkdir()
    script.write_text(f"#!{os.path.realpath('/usr/bin/python3')}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def test_channel_from_a_directory_without_channels_says_so(tmp_path):
    (tmp_path / "not-a-recipe-check").mkdir()
    proc = run_ci("packages", "--conda-build", _fake_conda_build(tmp_path), "--workdir", tmp_path / "work",
                  "--channel-from", tmp_path / "not-a-recipe-check")
    assert proc.returncode == 2 and "has no channel/" in proc.stderr


def test_channel_from_takes_each_package_by_name_version_and_variant(tmp_path):
    """.ci/run installs from the recipe-check's channel: a row is ok only where that channel holds
    the package's own name and version, and for an op the variant's build string."""
    from aop_ci.packages import _reused
    from aop_ci.repo import ROOT, WorkTree, discover

    packages = discover(WorkTree(ROOT))
    op = next(p for p in packages if p.kind == "op")
    common = next(p for p in packages if p.kind == "common")
    channel = tmp_path / "channel"
    (channel / "linux-64").mkdir(parents=True)
    for name in (f"{op.name}-{op.version}-none_cpu_py311habc_0.conda",
                 f"{op.name}-extra-{op.version}-torch_cpu_py311habc_0.conda",  # another package's name
                 f"{op.name}-9.9.9-torch_cpu_py311habc_0.conda",  # another version
                 f"{common.name}-{common.version}-abi1_py311habc_0.conda"):
        (channel / "linux-64" / name).write_bytes(b"x" * 2048)
    assert _reused(channel, op, "none").check == "ok"
    assert _reused(channel, op, "none").size_kib == 2
    assert _reused(channel, op, "torch").check == "not in channel"
    assert _reused(channel, common, "none").check == "ok"
