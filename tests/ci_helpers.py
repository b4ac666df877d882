"""Helpers of the packaging and CI tests: run a ``ci/`` script, make a toy monorepo.

The toy monorepo has this repository's shape -- ``common/`` (version in
``include/ascend_ops/version.h``), one op ``ops/toy_op/`` (version in ``_version.py``),
``recipes/`` -- with tiny sources that build in seconds (CMake projects with no compiled code)
and **the real recipes copied in**: the real ``common/recipe`` and an op's ``recipe/``, so the
broken-recipe tests exercise the same recipes, build scripts and stages as the real packages.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict, Optional, Sequence

ROOT = Path(__file__).resolve().parents[1]
CI = ROOT / "ci"
if str(CI) not in sys.path:
    sys.path.insert(0, str(CI))

from aop_ci.repo import WorkTree, discover  # noqa: E402


def run_ci(script: str, *args, cwd: Optional[Path] = None, env: Optional[Dict[str, str]] = None,
           timeout: float = 1800) -> subprocess.CompletedProcess:
    """Run ``ci/<script>`` with this Python; return the completed process (text output)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, str(CI / script), *[str(a) for a in args]],
                          capture_output=True, text=True, cwd=cwd, env=full_env, timeout=timeout)


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {proc.stderr}")
    return proc.stdout


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def first_op_recipe() -> Path:
    """The recipe directory of the first op found (every op's recipe has the same shape)."""
    ops = [p for p in discover(WorkTree(ROOT)) if p.kind == "op"]
    assert ops, "no op in this tree"
    return ROOT / ops[0].recipe_dir


TOY_FILES: Dict[str, str] = {
    "common/pyproject.toml": '''\
[build-system]
requires = ["scikit-build-core>=0.10", "pybind11>=2.12"]
build-backend = "scikit_build_core.build"

[project]
name = "ascend-op-common"
dynamic = ["version"]
description = "Toy common of the recipe tests: the ascend-ops command, nothing compiled."
requires-python = ">=3.9"
license = { text = "Apache-2.0" }
dependencies = ["numpy>=1.22,<2"]

[project.scripts]
ascend-ops = "ascend_ops.common.cli:main"

[tool.scikit-build]
minimum-version = "0.10"
build-dir = "build/{wheel_tag}"
wheel.packages = ["python/ascend_ops"]
metadata.version.provider = "scikit_build_core.metadata.regex"
metadata.version.input = "include/ascend_ops/version.h"
metadata.version.regex = '#define AOP_COMMON_VERSION_STRING "(?P<value>[^"]+)"'
''',
    "common/CMakeLists.txt": '''\
cmake_minimum_required(VERSION 3.24)
project(toy_common LANGUAGES NONE)
install(FILES cmake/AscendOpsCommonConfig.cmake DESTINATION ascend_ops/common/cmake)
''',
    "common/cmake/AscendOpsCommonConfig.cmake": "set(AscendOpsCommon_TOY ON)\n",
    "common/include/ascend_ops/version.h": '''\
#pragma once
#define AOP_COMMON_VERSION_STRING "0.1.0"
#define AOP_COMMON_ABI 1
''',
    "common/python/ascend_ops/common/__init__.py": '''\
"""Toy ascend_ops.common."""
from pathlib import Path


def cmake_dir() -> str:
    return str(Path(__file__).parent / "cmake")
''',
    "common/python/ascend_ops/common/cli.py": '''\
"""Toy `ascend-ops`: --version, list, platforms, check <op or package> (calls ascend_ops.<op>.check())."""
import argparse
import importlib
import sys
from importlib.metadata import entry_points, version


def main(argv=None):
    parser = argparse.ArgumentParser(prog="ascend-ops")
    parser.add_argument("--version", action="store_true")
    sub = parser.add_subparsers(dest="cmd")
    sub.add_parser("list")
    sub.add_parser("platforms")
    sub.add_parser("check").add_argument("ops", nargs="*")
    args = parser.parse_args(argv)
    if args.version:
        print("ascend-op-common", version("ascend-op-common"))
        return 0
    ops = {ep.name: ep for ep in entry_points(group="ascend_ops.ops")}
    if args.cmd == "list":
        print(" ".join(sorted(ops)) or "no ops installed")
        return 0
    if args.cmd == "platforms":
        print("toy")
        return 0
    if args.cmd == "check":
        for name in args.ops or sorted(ops):
            if name.startswith("ascend-op-"):  # a package: the toy ships one op each
                name = name[len("ascend-op-"):].replace("-", "_")
            if name not in ops:
                print(f"not installed: {name}")
                return 2
            ok = importlib.import_module(f"ascend_ops.{name}").check()
            print(f"{name}: {'ok' if ok else 'FAILED'}")
            if not ok:
                return 1
        return 0
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
''',
    "common/CHANGELOG.md": "# Changelog\n\n## 0.1.0\n- First toy release.\n",
    "common/README.md": "# toy common\n",
    "ops/toy_op/pyproject.toml": '''\
[build-system]
requires = ["scikit-build-core>=0.10", "pybind11>=2.12", "ascend-op-common==0.1.*"]
build-backend = "scikit_build_core.build"

[project]
name = "ascend-op-toy-op"
dynamic = ["version"]
description = "Toy op of the recipe tests: numpy in, numpy out."
requires-python = ">=3.9"
license = { text = "Apache-2.0" }
dependencies = ["ascend-op-common==0.1.*", "numpy>=1.22,<2"]

[project.entry-points."ascend_ops.ops"]
toy_op = "ascend_ops.toy_op:check"

[tool.scikit-build]
minimum-version = "0.10"
build-dir = "build/{wheel_tag}"
wheel.packages = ["python/ascend_ops"]
metadata.version.provider = "scikit_build_core.metadata.regex"
metadata.version.input = "python/ascend_ops/toy_op/_version.py"
''',
    "ops/toy_op/CMakeLists.txt": '''\
cmake_minimum_required(VERSION 3.24)
project(toy_op LANGUAGES NONE)
# Like a real op: common must be importable by the host Python that runs the build.
execute_process(COMMAND ${Python_EXECUTABLE} -c "import ascend_ops.common as c; print(c.cmake_dir())"
  OUTPUT_VARIABLE AscendOpsCommon_DIR OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "ascend_ops.common is not importable by ${Python_EXECUTABLE}")
endif()
if(NOT IS_DIRECTORY "${AscendOpsCommon_DIR}")
  message(FATAL_ERROR "no CMake directory ${AscendOpsCommon_DIR} in ascend_ops.common")
endif()
''',
    "ops/toy_op/python/ascend_ops/toy_op/__init__.py": '''\
"""Toy op."""
import numpy as np

from ._version import __version__


def check() -> bool:
    return bool(np.arange(4).sum() == 6)
''',
    "ops/toy_op/python/ascend_ops/toy_op/_version.py": '__version__ = "0.1.0"\n',
    "ops/toy_op/CHANGELOG.md": "# Changelog\n\n## 0.1.0\n- First toy release.\n",
    "ops/toy_op/README.md": "# toy op\n",
    "docs/index.md": "# docs\n",
    "ci/README": "toy ci dir\n",
    ".gitignore": "build/\n__pycache__/\n",
}


def make_toy_repo(dest: Path, files: Optional[Dict[str, str]] = None,
                  edit: Optional[Callable[[Path], None]] = None, extra_ops: Sequence[str] = (),
                  commit: bool = True) -> Path:
    """Write the toy monorepo into ``dest`` (a git repository with one commit).

    ``files`` adds or replaces files; ``edit(dest)`` may change anything before the commit;
    ``extra_ops`` adds more toy ops (copies of ``toy_op`` under other names).
    """
    dest.mkdir(parents=True, exist_ok=True)
    content = dict(TOY_FILES)
    for op in extra_ops:
        for path, text in TOY_FILES.items():
            if path.startswith("ops/toy_op/"):
                new = path.replace("toy_op", op)
                content[new] = text.replace("toy_op", op).replace("toy-op", op.replace("_", "-"))
    content.update(files or {})
    for rel, text in content.items():
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    shutil.copytree(ROOT / "common" / "recipe", dest / "common" / "recipe", dirs_exist_ok=True)
    set_recipe_context(dest / "common" / "recipe" / "recipe.yaml", name="ascend-op-common", version="0.1.0",
                       abi="1")
    for op in ["toy_op", *extra_ops]:
        shutil.copytree(first_op_recipe(), dest / "ops" / op / "recipe", dirs_exist_ok=True)
        set_recipe_context(dest / "ops" / op / "recipe" / "recipe.yaml",
                           name="ascend-op-" + op.replace("_", "-"), version="0.1.0", op=op)
    (dest / "recipes").mkdir(exist_ok=True)
    shutil.copy2(ROOT / "recipes" / "variants.yaml", dest / "recipes" / "variants.yaml")
    if edit is not None:
        edit(dest)
    if commit:
        if not (dest / ".git").exists():
            git(dest, "init", "-q", "-b", "main")
            git(dest, "config", "user.email", "ci@ascend-ops.invalid")
            git(dest, "config", "user.name", "ci tests")
        commit_all(dest, "toy monorepo")
    return dest


def set_recipe_context(recipe: Path, **values: str) -> None:
    """Set literal entries of a recipe's ``context:`` (a real recipe copied for a toy package)."""
    text = recipe.read_text(encoding="utf-8")
    for key, value in values.items():
        text, n = re.subn(rf"^  {key}: .*$", f'  {key}: "{value}"', text, count=1, flags=re.M)
        assert n == 1, f"no context entry {key} in {recipe}"
    recipe.write_text(text, encoding="utf-8")


def replace_in(path: Path, old: str, new: str, count: int = 1) -> None:
    """Replace ``old`` by ``new`` in ``path``; fail if ``old`` is not there."""
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def recipe_check(root: Path, workdir: Path, *args: str, timeout: float = 1800,
                 report: str = "report.json") -> dict:
    """Run ``ci/recipe-check`` on ``root``; return its JSON report plus ``returncode`` / ``output``."""
    report_path = workdir / report
    workdir.mkdir(parents=True, exist_ok=True)
    proc = run_ci("recipe-check", "--root", root, "--workdir", workdir, "--json", report_path,
                  *args, timeout=timeout)
    result = json.loads(report_path.read_text()) if report_path.is_file() else {"packages": {}}
    result["returncode"] = proc.returncode
    result["output"] = proc.stdout + proc.stderr
    return result
