"""Building common's test CMake projects against the installed runtime, for the tests that need
a compiled probe: the mixed-ABI modules (``tests/abi``) and the test ops built with
``ascend_ops_add_op()`` (``tests/float_op``, ``tests/dtype_of_op``)."""
from __future__ import annotations

import contextlib
import importlib
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator, List, Sequence

import pytest

import ascend_ops.common as common


def tool(name: str) -> str:
    """The venv's copy of a build tool (pip's cmake / ninja), else the one on PATH."""
    beside_python = Path(sys.executable).parent / name
    if beside_python.is_file():
        return str(beside_python)
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is needed to build common's test projects (pip install {name})")
    return found


def run(cmd: List[str]) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")


def cmake_dir(what: str) -> Path:
    """The installed package config; skips (saying why) from a checkout run with only the library built."""
    try:
        return common.cmake_dir()
    except FileNotFoundError as exc:
        pytest.skip(f"{what} builds against the installed package config (find_package(AscendOpsCommon)); "
                    f"install ascend-op-common: {exc}")


def build(project: Path, build_dir: Path, what: str, defines: Sequence[str] = ()) -> None:
    """Configure and build `project` in `build_dir` with Ninja, against the installed common."""
    run([tool("cmake"), "-S", str(project), "-B", str(build_dir), "-G", "Ninja",
         f"-DCMAKE_MAKE_PROGRAM={tool('ninja')}", "-DCMAKE_BUILD_TYPE=Release",
         f"-DAscendOpsCommon_DIR={cmake_dir(what)}", f"-DPython_EXECUTABLE={sys.executable}", *defines])
    run([tool("cmake"), "--build", str(build_dir), "-j2"])


@contextlib.contextmanager
def installed_test_op(project: Path, name: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """Build the test op `project`, install it into a temporary prefix and make
    ``ascend_ops.<name>`` importable while the context lasts; yields its ``_build_info``."""
    build_dir, prefix = tmp_path_factory.mktemp(f"{name}-build"), tmp_path_factory.mktemp(name)
    build(project, build_dir, f"the test op {name}")
    run([tool("cmake"), "--install", str(build_dir), "--prefix", str(prefix)])
    import ascend_ops

    # ascend_ops is a namespace package, but an editable install leaves it a list __path__,
    # which sys.path does not extend
    package = str(prefix / "ascend_ops")
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(prefix))
        if isinstance(ascend_ops.__path__, list):
            patch.setattr(ascend_ops, "__path__", ascend_ops.__path__ + [package])
        importlib.invalidate_caches()
        yield importlib.import_module(f"ascend_ops.{name}._build_info")
