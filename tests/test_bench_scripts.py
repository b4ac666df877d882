"""Every op's benchmark script (`./dev bench`) runs: its --quick form, as a subprocess.

Nothing here times anything or compares figures: the benchmarks print ratios, the tests only see
that each one still runs to its result files (a benchmark left behind by an API change is
otherwise found only by the next person who runs `./dev bench`)."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(REPO.glob("ops/*/bench/run*.py"))  # run_<op>.py: a second op of the package


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the benchmarks' baselines are torch")
@pytest.mark.parametrize("script", SCRIPTS, ids=[f"{s.parent.parent.name}/{s.stem}" for s in SCRIPTS])
def test_bench_script_runs_to_its_results(script, tmp_path):
    run = subprocess.run([sys.executable, str(script), "--quick", "--out", str(tmp_path)], capture_output=True,
                         text=True, timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "results: " in run.stdout, run.stdout
    assert any(tmp_path.glob("*.csv")), sorted(tmp_path.iterdir())


def test_every_op_has_a_benchmark():
    packages = sorted(p.parent.name for p in REPO.glob("ops/*/pyproject.toml"))
    assert sorted(s.parent.parent.name for s in SCRIPTS if s.name == "run.py") == packages
