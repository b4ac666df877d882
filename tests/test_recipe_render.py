"""The meta.yaml emulation (render) and the lint rules, on the real recipes and on broken copies."""

from __future__ import annotations

import re

import pytest

from ci_helpers import ROOT, first_op_recipe, make_toy_repo, replace_in
from aop_ci.recipe.lint import lint
from aop_ci.recipe.render import RenderError, apply_selectors, load_config, render_recipe, selector_namespace
from aop_ci.recipe.spec import apply_pin_expressions, ensure_valid_spec, pep440_to_conda, split_spec
from aop_ci.repo import WorkTree, discover

CONFIG = ROOT / "recipes" / "conda_build_config.yaml"
PLATFORMS = ("linux-64", "linux-aarch64")


@pytest.mark.parametrize("version, min_pin, max_pin, expected", [
    ("0.1.0", "x.x.x.x.x.x.x", "x.x", ">=0.1.0,<0.2.0a0"),
    ("1.2.3", "x.x.x.x.x.x.x", "x", ">=1.2.3,<2.0a0"),
    ("3.11.7", "x.x", "x.x", ">=3.11,<3.12.0a0"),
    ("2.17", "x.x.x.x.x.x.x", "x.x.x", ">=2.17,<2.18.0a0"),
])
def test_pin_expressions(version, min_pin, max_pin, expected):
    assert apply_pin_expressions(version, min_pin, max_pin) == expected


def test_spec_helpers():
    assert split_spec("numpy >=1.22,<2 py*") == ("numpy", ">=1.22,<2", "py*")
    assert ensure_valid_spec("gxx_linux-64 14") == "gxx_linux-64 14.*"
    assert ensure_valid_spec("pytorch ==2.13.0") == "pytorch ==2.13.0"
    assert pep440_to_conda("ascend-op-common==0.1.*") == ("ascend-op-common", "0.1.*")
    assert pep440_to_conda("numpy>=1.22,<2") == ("numpy", "<2,>=1.22")


def test_selectors():
    text = "a: 1\nb: 2  # [aarch64]\nc: 3  # [not aarch64 and py >= 311]\n"
    arm = apply_selectors(text, selector_namespace("linux-aarch64", {"python": "3.11"}), "t")
    x86 = apply_selectors(text, selector_namespace("linux-64", {"python": "3.11"}), "t")
    assert arm.split() == ["a:", "1", "b:", "2"]
    assert x86.split() == ["a:", "1", "c:", "3"]
    with pytest.raises(RenderError, match="no_such_name"):
        apply_selectors("x: 1  # [no_such_name]\n", selector_namespace("linux-64", {}), "t")


@pytest.mark.parametrize("platform", PLATFORMS)
def test_every_recipe_renders_from_its_single_version_source(platform):
    config = load_config(CONFIG, platform)
    for pkg in discover(WorkTree(ROOT)):
        rendered = render_recipe(ROOT / pkg.recipe_dir, config, platform)
        assert rendered, pkg.name
        for r in rendered:
            assert (r.name, r.version) == (pkg.name, pkg.version)
            assert not r.skip
            assert any(x.startswith(f"gxx_{platform} ") for x in r.requirements("build"))
            assert any(x.startswith(f"sysroot_{platform} ") for x in r.requirements("build"))
        if pkg.kind == "op":
            expected = 1
            for key in ("framework", "cann", "python"):
                expected *= len(config.values[key])
            assert len(rendered) == expected, "one variant per framework x cann x python"
            assert len({r.build_string for r in rendered}) == expected
        assert not [f for f in lint(rendered, pkg) if f.level == "error"], pkg.name


def test_common_run_exports_pin_minor_and_abi():
    pkg = next(p for p in discover(WorkTree(ROOT)) if p.kind == "common")
    (r,) = render_recipe(ROOT / pkg.recipe_dir, load_config(CONFIG, "linux-64"), "linux-64")
    header = (ROOT / "common/include/ascend_ops/version.h").read_text()
    abi = re.search(r"#define AOP_COMMON_ABI (\d+)", header).group(1)
    major, minor = (int(x) for x in pkg.version.split(".")[:2])
    assert r.build["run_exports"] == [
        f"ascend-op-common >={pkg.version},<{major}.{minor + 1}.0a0 abi{abi}_*"]
    assert r.build_string.startswith(f"abi{abi}_")


def test_op_variants_carry_only_their_framework():
    config = load_config(CONFIG, "linux-64")
    for r in render_recipe(first_op_recipe(), config, "linux-64"):
        fw = r.variant["framework"]
        host = {split_spec(x)[0]: split_spec(x)[1] for x in r.requirements("host")}
        constrained = {split_spec(x)[0] for x in r.requirements("run_constrained")}
        run = {split_spec(x)[0] for x in r.requirements("run")}
        wants = {"torch": {"pytorch"}, "mindspore": {"mindspore"}, "all": {"pytorch", "mindspore"},
                 "none": set()}[fw]
        assert {"pytorch", "mindspore"} & set(host) == wants
        assert constrained == wants and not (run & {"pytorch", "mindspore"})
        assert host["ascend-op-common"] == f"{config.values['ascend_op_common'][0]}.*"
        env = dict(e.split("=", 1) for e in r.build["script_env"] if "=" in e)
        assert env["AOP_WITH_TORCH"] == ("ON" if "pytorch" in wants else "OFF")
        assert env["AOP_WITH_MINDSPORE"] == ("ON" if "mindspore" in wants else "OFF")
        assert env["AOP_WITH_NPU"] == ("OFF" if r.variant["cann"] == "none" else "ON")
        assert r.build_string.startswith(f"{fw}_{'cpu' if r.variant['cann'] == 'none' else 'cann'}")


@pytest.fixture()
def toy(tmp_path):
    return make_toy_repo(tmp_path / "toy", commit=False)


def _render_toy(toy, platform="linux-64"):
    return render_recipe(toy / "ops/toy_op/recipe", load_config(toy / "recipes/conda_build_config.yaml", platform), platform)


def _toy_pkg(toy, kind="op"):
    return next(p for p in discover(WorkTree(toy)) if p.kind == kind)


@pytest.mark.parametrize("old, new, message", [
    ("{% set op =", "{{ undefined_name }}\n{% set op =", "undefined_name"),
    ("# [not linux]", "# [not lunix]", "lunix"),
    ("package:\n  name: {{ name }}", "package:\n  name: {{ name", "Jinja syntax"),
    ("regex_pattern='__version__", "regex_pattern='__VERSION__", "group"),
])
def test_broken_recipes_do_not_render(toy, old, new, message):
    replace_in(toy / "ops/toy_op/recipe/meta.yaml", old, new)
    with pytest.raises(RenderError, match=message):
        _render_toy(toy)


@pytest.mark.parametrize("old, new, rule", [
    ("  skip: true  # [not linux]\n", "", "linux-only"),
    ("  run:\n    - python\n", "  run:\n    - python\n    - ascend-op-common\n", "op-common"),
    ("    - ascend-op-common\n", "", "op-common"),
    ("    - numpy >=1.22,<2\n", "    - numpy >=1.20\n", "pyproject-run"),
    ("    - {{ stdlib('c') }}\n", "", "compilers"),
    ("  run_constrained:\n", "  run_constrained:\n    - pytorch =={{ pytorch }}  # [framework == 'mindspore']\n", None),
    ("    - pytorch =={{ pytorch }}", "    - pytorch {{ pytorch }}", "frameworks"),
    ("    - pip check\n", "", "tests"),
    ("  license:", "  licence:", "sections"),
    ("  version: {{ version }}", "  version: 0.1.0", "version"),
])
def test_lint_rules(toy, old, new, rule):
    # the toy compiles nothing; make it a C/C++ project so the compiler rules apply
    replace_in(toy / "ops/toy_op/CMakeLists.txt", "LANGUAGES NONE", "LANGUAGES C CXX")
    replace_in(toy / "ops/toy_op/recipe/meta.yaml", old, new)
    findings = lint(_render_toy(toy), _toy_pkg(toy))
    rules = {f.rule for f in findings if f.level == "error"}
    if rule is None:
        assert rules == set()
    else:
        assert rule in rules, [str(f) for f in findings]


def test_lint_common_run_exports(toy):
    replace_in(toy / "common/recipe/meta.yaml", ' abi{{ abi }}_*', '')
    config = load_config(toy / "recipes/conda_build_config.yaml", "linux-64")
    findings = lint(render_recipe(toy / "common/recipe", config, "linux-64"), _toy_pkg(toy, "common"))
    assert "common-run-exports" in {f.rule for f in findings}


def test_lint_passes_on_the_toy_copies(toy):
    for kind, recipe in (("common", "common/recipe"), ("op", "ops/toy_op/recipe")):
        config = load_config(toy / "recipes/conda_build_config.yaml", "linux-64")
        findings = lint(render_recipe(toy / recipe, config, "linux-64"), _toy_pkg(toy, kind))
        assert [str(f) for f in findings if f.level == "error"] == []
