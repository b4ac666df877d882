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
