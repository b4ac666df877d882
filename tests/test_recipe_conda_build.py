"""conda-build renders every recipe, and renders each package's one version source.

conda-build (``conda-render``) hands v1 recipes to rattler-build without its experimental
features: a recipe that read pyproject.toml or the version file with ``load_from_file`` would not
render. Every variant it renders must carry the name and version the package's version source
says (and an op's name, common's C ABI in the build string). ``./dev`` provides conda-build from
``../shared/tools/conda-wheels`` (``AOP_CONDA_BUILD``) where no conda-build is on PATH; without
either the test is skipped, saying so.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from ci_helpers import ROOT
from aop_ci.recipe import context
from aop_ci.repo import WorkTree, discover

CONDA_BUILD = os.environ.get("AOP_CONDA_BUILD") or shutil.which("conda-build")
pytestmark = pytest.mark.skipif(
    not CONDA_BUILD, reason="conda-build path skipped: no conda-build on PATH and AOP_CONDA_BUILD unset "
                            "(./dev sets it where ../shared/tools/conda-wheels exists)")

PACKAGES = discover(WorkTree(ROOT))


def _render(recipe_dir: Path, tmp_path: Path) -> list:
    rc = tmp_path / "condarc"  # no channel: rendering solves nothing
    rc.write_text("channels: []\nsolver: classic\n")
    conda_render = Path(CONDA_BUILD).with_name("conda-render")
    proc = subprocess.run([str(conda_render), str(recipe_dir), "-m", str(ROOT / "recipes" / "variants.yaml")],
                          capture_output=True, text=True, env=dict(os.environ, CONDARC=str(rc)), timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # one YAML document per variant, printed back to back
    docs = re.split(r"(?m)^(?=schema_version:)", proc.stdout)
    return [yaml.safe_load(d) for d in docs if d.strip().startswith("schema_version:")]


@pytest.mark.parametrize("pkg", PACKAGES, ids=lambda p: p.dir)
def test_conda_build_renders_the_version_source(pkg, tmp_path):
    assert context.problems(WorkTree(ROOT), pkg) == []
    rendered = _render(ROOT / pkg.recipe_dir, tmp_path)
    assert len(rendered) == (4 * 2 if pkg.kind == "op" else 1), [r["build"]["string"] for r in rendered]
    for recipe in rendered:
        assert recipe["package"] == {"name": pkg.name, "version": pkg.version}
        assert recipe["context"]["version"] == pkg.version
        if pkg.kind == "op":
            assert recipe["tests"][0]["python"]["imports"] == [f"ascend_ops.{pkg.op}"]
        if pkg.kind == "common":
            abi = re.search(r"#define AOP_COMMON_ABI (\d+)", (ROOT / pkg.version_file).read_text()).group(1)
            assert recipe["build"]["string"].startswith(f"abi{abi}_")

