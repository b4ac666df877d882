"""Shared fixtures of the ascend_ops.common Python tests.

Tests that need ``libascend_ops_common.so`` take the ``common_lib`` fixture (the library's
pybind11 binding, ``ascend_ops.common._runtime``): it uses ``$ASCEND_OPS_COMMON_LIB`` when set,
else the installed library, and skips (saying how to provide one) when the library or the
binding is not built. The binding is installed with the package, so a run from a checkout
without installing (``PYTHONPATH=common/python pytest common/tests/python``) runs the tests
that need neither and skips the others.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Callable, Dict, Iterator, Optional

import pytest

_SOURCE = Path(__file__).resolve().parents[2] / "python"
if importlib.util.find_spec("ascend_ops") is None or importlib.util.find_spec("ascend_ops.common") is None:
    sys.path.insert(0, str(_SOURCE))  # not installed: test the checkout

from ascend_ops.common import _clib, loader  # noqa: E402
from ascend_ops.common._paths import LIB_ENV, library_path  # noqa: E402
from ascend_ops.common.errors import NativeImportError  # noqa: E402

def _find_library() -> Optional[Path]:
    try:
        return library_path()
    except NativeImportError:
        return None


@pytest.fixture(scope="session")
def common_lib():
    """The binding of the loaded ``libascend_ops_common.so`` (the module
    ``ascend_ops.common._runtime``); skips when the library or the binding is not built."""
    path = _find_library()
    if path is None:
        pytest.skip(f"libascend_ops_common.so is not built: install ascend-op-common or set "
                    f"${LIB_ENV} to a built copy")
    if importlib.util.find_spec("ascend_ops.common._runtime") is None:
        pytest.skip("ascend_ops.common._runtime is not built: install ascend-op-common")
    return _clib.library()


@pytest.fixture
def fresh_clib(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Forget the loaded library for one test (restored afterwards)."""
    monkeypatch.setattr(_clib, "_binding", None)
    monkeypatch.setattr(_clib, "_lib_file", None)
    yield


@pytest.fixture
def clean_loader(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """An empty native-module cache, and fake op modules dropped from sys.modules after."""
    monkeypatch.setattr(loader, "_loaded", {})
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith("ascend_ops.fake"):
            del sys.modules[name]


@pytest.fixture
def make_op(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_loader: None
            ) -> Callable[..., str]:
    """Create a fake op package ``ascend_ops.<name>`` under tmp_path and put it on sys.path.

    ``make_op("fakeop", {"_core.py": "COMMON_ABI = 1"})`` returns ``"ascend_ops.fakeop"``.
    Native modules are stood in for by Python modules with the same attributes.
    """
    (tmp_path / "ascend_ops").mkdir()  # before sys.path changes: namespace paths are cached
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()

    import ascend_ops

    namespace_dir = str(tmp_path / "ascend_ops")
    if isinstance(ascend_ops.__path__, list):  # e.g. a scikit-build-core editable install
        monkeypatch.setattr(ascend_ops, "__path__", ascend_ops.__path__ + [namespace_dir])

    def make(name: str, files: Dict[str, str]) -> str:
        package = tmp_path / "ascend_ops" / name
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        for filename, text in files.items():
            (package / filename).write_text(text)
        importlib.invalidate_caches()
        return f"ascend_ops.{name}"

    return make


@pytest.fixture
def child_env() -> Callable[..., Dict[str, str]]:
    """Return ``env(**extra)``: the environment for a child Python that imports the same
    ascend_ops.common as this process, plus ``extra`` variables."""
    import ascend_ops.common

    root = str(Path(ascend_ops.common.__file__).resolve().parents[2])

    def env(**extra: str) -> Dict[str, str]:
        out = dict(os.environ)
        out["PYTHONPATH"] = os.pathsep.join([root] + [p for p in [out.get("PYTHONPATH")] if p])
        out.update(extra)
        return out

    return env


@pytest.fixture
def entry_points(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """Replace the installed ``ascend_ops.ops`` entry points: ``entry_points(("op", "m:OP"))``."""
    import importlib.metadata

    registered: list = []

    def fake(**params):
        group = params.get("group")
        return [ep for ep in registered if group is None or ep.group == group]

    monkeypatch.setattr(importlib.metadata, "entry_points", fake)

    def register(*pairs) -> None:
        registered.extend(importlib.metadata.EntryPoint(name=name, value=value, group="ascend_ops.ops")
                          for name, value in pairs)

    return register


_INFO = """
from ascend_ops.common.registry import OpInfo
OP = OpInfo(name="{name}", package="ascend-op-{name}", checks="ascend_ops.{name}._check:cases")
"""

_CHECKS = """
from ascend_ops.common.errors import AdapterNotBuilt, FrameworkMissing
from ascend_ops.common.registry import CheckCase, CheckSkipped


def _passes():
    return "max |diff| 0"


def _fails():
    assert {fail_value} == 1, "key_cache differs at index (0, 1)"


def _skips():
    raise CheckSkipped("needs two devices")


def _no_torch():
    raise FrameworkMissing("torch is not installed: pip install torch==2.13.0")


def cases():
    return [
        CheckCase("cpu", "core", _passes),
        CheckCase("emu", "core", _fails),
        CheckCase("cpu", "mindspore graph", _skips),
        CheckCase("cpu", "torch eager", _no_torch),
        CheckCase("npu", "torch eager", _passes),
    ]
"""


def _build_info_py(emu: bool = True, npu: bool = False, torch: str = "", mindspore: str = "",
                   ms_ascend_why: str = "CANN was not found when the op was built") -> str:
    return (f"BACKENDS = {{'cpu': True, 'emu': {emu}, 'npu': {npu}}}\n"
            f"FRAMEWORKS = {{'torch': {bool(torch)}, 'torch_npu': False, 'mindspore': {bool(mindspore)}, "
            f"'mindspore_ascend': {not ms_ascend_why}}}\n"
            f"NOT_BUILT_WHY = {{'mindspore_ascend': {ms_ascend_why!r}}}\n"
            f"BUILT_AGAINST = {{'torch': {torch!r}, 'mindspore': {mindspore!r}}}\n")


@pytest.fixture
def build_info_text() -> Callable[..., str]:
    """Return ``text(emu=True, npu=False, torch="", mindspore="")``: a ``_build_info.py`` as
    ``ascend_ops_add_op`` generates it; a framework version string means its adapter was
    built against that version."""
    return _build_info_py


@pytest.fixture
def fake_op(make_op, entry_points) -> Callable[..., str]:
    """Install a fake op ``name`` with an entry point, a ``_build_info.py`` (cpu and emu
    built) and five check cases: cpu/core passes, emu/core fails unless ``fails=False``, one
    CheckSkipped, one FrameworkMissing, one npu. ``files`` adds or replaces modules
    (``{"_core.py": ...}``). Returns the op name."""

    def install(name: str, *, fails: bool = True, files: Optional[Dict[str, str]] = None) -> str:
        modules = {"_info.py": _INFO.format(name=name),
                   "_check.py": _CHECKS.format(fail_value=2 if fails else 1),
                   "_build_info.py": _build_info_py()}
        modules.update(files or {})
        make_op(name, modules)
        entry_points((name, f"ascend_ops.{name}._info:OP"))
        return name

    return install
