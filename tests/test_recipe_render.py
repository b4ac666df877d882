"""The v1 recipes rendered by rattler-build itself (no build): every variant of
recipes/variants.yaml, for linux-64 and linux-aarch64, from each package's one version source."""

from __future__ import annotations

import re

import pytest

from ci_helpers import ROOT
from aop_ci.recipe import rattler

PLATFORMS = ["linux-64", "linux-aarch64"]


def _abi() -> str:
    text = (ROOT / "common/include/ascend_ops/version.h").read_text()
    return re.search(r"#define AOP_COMMON_ABI (\d+)", text).group(1)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_every_recipe_renders_from_its_single_version_source(platform, repo_packages):
    for pkg in repo_packages:
        variants = rattler.render(ROOT, ROOT / pkg.recipe_dir, target_platform=platform)
        expected = 4 * 2 if pkg.kind == "op" else 1  # an op: framework x cann
        assert len(variants) == expected, (pkg.name, [v["build"]["string"] for v in variants])
        for v in variants:
            assert v["package"] == {"name": pkg.name, "version": pkg.version}
            arch = platform.split("-")[1]
            if pkg.kind in ("devkit", "integration"):  # pure Python: no compiler
                assert v["build"]["noarch"] == "python" and "build" not in v["requirements"]
                continue
            assert f"gxx_linux-{arch} 14.*" in v["requirements"]["build"]
            assert f"sysroot_linux-{arch} 2.28.*" in v["requirements"]["build"]


def test_common_run_exports_pin_minor_and_abi(repo_packages):
    common = next(p for p in repo_packages if p.kind == "common")
    (v,) = rattler.render(ROOT, ROOT / common.recipe_dir)
    assert v["build"]["string"].startswith(f"abi{_abi()}_py311h")
    pin = v["requirements"]["run_exports"]["weak"][0]["pin_subpackage"]
    assert pin["name"] == common.name and pin["upper_bound"] == "x.x"
    assert pin["build"] == f"abi{_abi()}_*"
    assert v["tests"][0]["python"]["imports"] == ["ascend_ops.common"]


def test_op_variants_carry_only_their_framework(repo_packages):
    op = next(p for p in repo_packages if p.kind == "op")
    variants = rattler.render(ROOT, ROOT / op.recipe_dir)
    seen = set()
    for v in variants:
        framework, backend = v["build"]["string"].split("_")[:2]
        seen.add((framework, backend))
        host = v["requirements"]["host"]
        constrained = v["requirements"].get("run_constraints", [])
        assert ("pytorch ==2.13.0" in host) == (framework in ("torch", "all"))
        assert ("mindspore ==2.10.0" in host) == (framework in ("mindspore", "all"))
        # numpy < 2 is MindSpore 2.10's constraint: carried by the variants with its adapter only
        with_ms = framework in ("mindspore", "all")
        assert sorted(constrained) == sorted([x for x in host if x.startswith(("pytorch", "mindspore"))]
                                             + (["numpy <2"] if with_ms else []))
        assert "numpy >=1.22" in v["requirements"]["run"]
        assert "ascend-op-common 0.1.*" in host
        assert not any(x.startswith(("pytorch", "mindspore")) for x in v["requirements"]["run"])
        assert v["tests"][0]["python"]["imports"] == [f"ascend_ops.{op.op}"]
    assert {f for f, _ in seen} == {"none", "torch", "mindspore", "all"}
    assert {b for _, b in seen} == {"cpu", "cann8.3.RC1"}


def test_every_op_shares_one_recipe(repo_packages):
    """The same file but for the op's literal name, version, op and summary."""
    own = re.compile(r'^  (name|version|op|summary): .*$', re.M)
    recipes = {own.sub(r"  \1: <own>", (ROOT / p.recipe_dir / "recipe.yaml").read_text())
               for p in repo_packages if p.kind == "op"}
    assert len(recipes) == 1
    assert "load_from_file(" not in next(iter(recipes))  # conda-build enables no experimental feature
    # the build script is the recipe's own (build.script.content), not a file copied per op
    assert not [p for p in repo_packages if p.kind == "op" and (ROOT / p.recipe_dir / "build.sh").exists()]


def test_no_meta_yaml_is_left(repo_packages):
    assert not list(ROOT.glob("*/recipe/meta.yaml")) and not list(ROOT.glob("ops/*/recipe/meta.yaml"))
    assert not (ROOT / "recipes" / "conda_build_config.yaml").exists()


def test_the_integration_package_needs_every_op(repo_packages):
    integration = next(p for p in repo_packages if p.kind == "integration")
    (v,) = rattler.render(ROOT, ROOT / integration.recipe_dir)
    run = v["requirements"]["run"]
    for op in (p for p in repo_packages if p.kind == "op"):
        assert f"{op.name} 0.1.*" in run, (op.name, run)
    assert not any(p.name in " ".join(run) for p in repo_packages if p.kind == "devkit")
