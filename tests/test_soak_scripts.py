"""Every op's soak script (`./dev soak`) runs: a short soak per op, as a subprocess."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(REPO.glob("ops/*/bench/soak*.py"))  # soak_<op>.py: a second op of the package


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the soak runs go through torch")
@pytest.mark.parametrize("script", SCRIPTS, ids=[f"{s.parent.parent.name}/{s.stem}" for s in SCRIPTS])
def test_soak_script_runs_and_reports(script):
    run = subprocess.run([sys.executable, str(script), "--calls", "3000"], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3,000 calls" in run.stdout and "largest growth" in run.stdout and ": ok" in run.stdout, run.stdout


def test_every_op_has_a_soak_script():
    from ascend_ops.common.registry import installed_ops

    packages = sorted(p.parent.name for p in REPO.glob("ops/*/pyproject.toml"))
    assert sorted(s.parent.parent.name for s in SCRIPTS if s.name == "soak.py") == packages
    assert len(SCRIPTS) == len(installed_ops()), (SCRIPTS, [op.name for op in installed_ops()])
