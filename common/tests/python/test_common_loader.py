"""load_native: every failure is a specific ImportError that says what to do; no fallback.

Fake op packages are written under tmp_path (``make_op`` fixture); Python modules stand in
for the pybind modules, with the same ``COMMON_ABI`` / ``COMMON_VERSION`` attributes.
"""

from __future__ import annotations

import importlib.util
import sys

import pytest

from ascend_ops.common import _clib, loader
from ascend_ops.common.errors import (
    AbiMismatch,
    AdapterNotBuilt,
    CommonLibraryError,
    FrameworkMissing,
    FrameworkVersionMismatch,
    NativeImportError,
    NativeLoadError,
    OpNotInstalled,
)
from ascend_ops.common.loader import load_native

GOOD_CORE = "COMMON_ABI = {abi}\nCOMMON_VERSION = '{version}'\nBACKENDS = ('cpu', 'emu')\n"
COUNTING = "import builtins\nbuiltins.__dict__.setdefault('_aop_loads', []).append(__name__)\n"


@pytest.fixture
def good_core(common_lib):
    return GOOD_CORE.format(abi=_clib.common_abi(), version=_clib.common_version())


def _hide(monkeypatch, *names):
    """Make find_spec report ``names`` as not installed."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in names else real(name, *a))


def test_names():
    assert loader.op_module("my_op") == "ascend_ops.my_op"
    assert loader.op_module("ascend_ops.rope") == "ascend_ops.rope"
    assert loader.distribution_name("my_op") == "ascend-op-my-op"
    assert loader.native_module_name("rope", "mindspore") == "ascend_ops.rope._ms"
    with pytest.raises(ValueError, match="piece should be one of"):
        load_native("rope", "cuda")
    with pytest.raises(ValueError, match="op_package"):
        load_native("not a name", "core")


def test_distribution_is_the_one_the_build_recorded(make_op, build_info_text):
    # lightning_indexer_quant ships in ascend-op-lightning-indexer: its _build_info says so, and
    # a reinstall hint must name that package, not one derived from the op's name.
    make_op("fakesecondop", {"_build_info.py": 'DISTRIBUTION = "ascend-op-fake-first"\n' + build_info_text()})
    assert loader.distribution_name("fakesecondop") == "ascend-op-fake-first"
    make_op("fakeplainop", {"_build_info.py": build_info_text()})
    assert loader.distribution_name("fakeplainop") == "ascend-op-fakeplainop"


def test_every_error_is_an_import_error():
    for exc in (AbiMismatch, AdapterNotBuilt, CommonLibraryError, FrameworkMissing,
                FrameworkVersionMismatch, NativeLoadError, OpNotInstalled):
        assert issubclass(exc, NativeImportError) and issubclass(exc, ImportError)


def test_loads_once_and_caches(make_op, good_core):
    import builtins

    package = make_op("fakeok", {"_core.py": COUNTING + good_core})
    first = load_native(package, "core")
    assert load_native("fakeok", "core") is first
    assert first.BACKENDS == ("cpu", "emu")
    assert builtins._aop_loads.count("ascend_ops.fakeok._core") == 1
    assert loader.loaded()["ascend_ops.fakeok._core"] is first


def test_abi_mismatch_names_both_versions(make_op, common_lib):
    package = make_op("fakeabi", {"_core.py": "COMMON_ABI = 999\nCOMMON_VERSION = '9.9.9'\n"})
    with pytest.raises(AbiMismatch) as info:
        load_native(package, "core")
    message = str(info.value)
    for text in ("ascend_ops.fakeabi._core", "9.9.9", "ABI 999", _clib.common_version(),
                 f"ABI {_clib.common_abi()}", "ascend-op-common", "ascend-op-fakeabi",
                 "rebuild"):
        assert text in message, f"{text!r} missing from: {message}"
    assert "ascend_ops.fakeabi._core" not in sys.modules
    with pytest.raises(AbiMismatch):   # and again: nothing cached
        load_native(package, "core")


def test_module_without_abi_is_rejected(make_op, common_lib):
    package = make_op("fakenoabi", {"_core.py": "X = 1\n"})
    with pytest.raises(AbiMismatch, match="no int COMMON_ABI"):
        load_native(package, "core")


def test_core_not_built(make_op, common_lib):
    package = make_op("fakenocore", {})
    with pytest.raises(AdapterNotBuilt) as info:
        load_native(package, "core")
    message = str(info.value)
    assert "ascend_ops.fakenocore._core is not built" in message
    assert "pip install --no-build-isolation --force-reinstall --no-deps ascend-op-fakenocore" in message


def test_torch_adapter_not_built(make_op, good_core, monkeypatch):
    package = make_op("fakenotorch", {"_core.py": good_core})
    imported = []
    monkeypatch.setattr(loader, "import_framework", lambda name: imported.append(name))
    with pytest.raises(AdapterNotBuilt) as info:
        load_native(package, "torch")
    message = str(info.value)
    assert imported == ["torch"], "the framework is imported before its adapter"
    assert "no torch adapter" in message and "torch was not installed when the op was built" in message
    assert "torch 2.13.0" in message and "ascend-op-fakenotorch" in message


def test_mindspore_adapter_loads_after_mindspore(make_op, good_core, monkeypatch):
    package = make_op("fakems", {"_core.py": good_core, "_ms.py": good_core})
    imported = []
    monkeypatch.setattr(loader, "import_framework", lambda name: imported.append(name))
    module = load_native(package, "mindspore")
    assert module.__name__ == "ascend_ops.fakems._ms" and imported == ["mindspore"]


@pytest.mark.parametrize("piece, framework, command", [
    ("torch", "torch", "pip install torch==2.13.0"),
    ("mindspore", "mindspore", "pip install mindspore==2.10.0"),
])
def test_framework_missing(make_op, monkeypatch, piece, framework, command):
    package = make_op(f"fakeno{framework}", {"_torch.py": "", "_ms.py": ""})
    _hide(monkeypatch, framework)
    with pytest.raises(FrameworkMissing) as info:
        load_native(package, piece)
    assert command in str(info.value) and package in str(info.value)


def test_framework_import_failure_is_reported(make_op, monkeypatch):
    package = make_op("fakebrokentorch", {"_torch.py": ""})

    def broken(name):
        raise ImportError("libtorch_npu.so: cannot open shared object file")

    monkeypatch.setattr(loader, "import_framework", broken)
    with pytest.raises(NativeLoadError, match="import torch` failed: libtorch_npu"):
        load_native(package, "torch")


def test_op_not_installed(clean_loader, common_lib):
    with pytest.raises(OpNotInstalled, match="pip install ascend-op-fake-absent-op"):
        load_native("fake_absent_op", "core")


def test_loader_rejection_says_rebuild(make_op, common_lib):
    package = make_op("fakeundef", {
        "_core.py": "raise ImportError('undefined symbol: _ZN3aop5Cache3getEv')\n"})
    with pytest.raises(NativeLoadError) as info:
        load_native(package, "core")
    message = str(info.value)
    assert "undefined symbol" in message and "rebuild" in message
    assert isinstance(info.value.__cause__, ImportError)


def test_common_library_missing(make_op, fresh_clib, monkeypatch, tmp_path):
    package = make_op("fakenolib", {"_core.py": "COMMON_ABI = 1\n"})
    monkeypatch.setenv("ASCEND_OPS_COMMON_LIB", str(tmp_path / "missing.so"))
    with pytest.raises(CommonLibraryError):
        load_native(package, "core")
    assert "ascend_ops.fakenolib._core" not in sys.modules, "imported before the library"


def test_framework_version_checked_before_loading(make_op, good_core, monkeypatch, build_info_text):
    package = make_op("fakeoldtorch", {
        "_build_info.py": build_info_text(torch="2.12.0"),
        "_torch.py": "raise RuntimeError('a mismatched binary must not be loaded')\n"})
    monkeypatch.setattr(loader, "import_framework", lambda name: None)
    monkeypatch.setattr(loader, "version", lambda name: "2.13.0+cpu")
    with pytest.raises(FrameworkVersionMismatch) as info:
        load_native(package, "torch")
    message = str(info.value)
    assert "built against torch 2.12.0 but torch 2.13.0 is installed" in message
    assert "install torch==2.12.0 or rebuild ascend-op-fakeoldtorch against 2.13.0" in message
    assert "ascend_ops.fakeoldtorch._torch" not in sys.modules


def test_matching_framework_version_loads(make_op, good_core, monkeypatch, build_info_text):
    package = make_op("fakesametorch", {"_build_info.py": build_info_text(torch="2.13.0"),
                                        "_torch.py": good_core})
    monkeypatch.setattr(loader, "import_framework", lambda name: None)
    monkeypatch.setattr(loader, "version", lambda name: "2.13.0+cpu")
    assert load_native(package, "torch").__name__ == "ascend_ops.fakesametorch._torch"
    assert loader.build_info(package).BUILT_AGAINST["torch"] == "2.13.0"
    assert loader.build_info("fake_not_installed_xyz") is None
