"""`./dev COMMAND --help` prints the usage and runs nothing (it used to start the command: a
`./dev test --help` built everything and ran the suite)."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

DEV = Path(__file__).resolve().parent.parent / "dev"


@pytest.mark.parametrize("argv", [["test", "--help"], ["test", "-h"], ["bench", "--help"], ["packages", "-h"],
                                  ["help"], []])
def test_help_prints_usage_and_runs_nothing(argv, tmp_path):
    # a venv path that does not exist: any set-up step would try to create it there
    env = dict(os.environ, AOP_VENV=str(tmp_path / "no-venv"))
    run = subprocess.run([str(DEV), *argv], capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("usage: ./dev COMMAND"), run.stdout
    assert not (tmp_path / "no-venv").exists(), "the help ran a set-up"


def test_unknown_command_fails_with_usage():
    run = subprocess.run([str(DEV), "no-such-command"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and run.stdout.startswith("usage: ./dev COMMAND")
