"""Op discovery through the ascend_ops.ops entry points, OpInfo statuses and checks."""

from __future__ import annotations

import importlib.util

import pytest

from ascend_ops.common import _clib, frameworks, registry
from ascend_ops.common.registry import (
    BrokenOp,
    CheckCase,
    CheckResult,
    OpInfo,
    installed_ops,
)


def _core(abi=None):
    abi = _clib.common_abi() if abi is None else abi
    return f"COMMON_ABI = {abi}\nCOMMON_VERSION = 'x'\n"


def test_no_ops(entry_points):
    assert installed_ops() == []


def test_discovers_ops_sorted(fake_op):
    fake_op("fakezeta")
    fake_op("fakealpha")
    ops = installed_ops()
    assert [op.name for op in ops] == ["fakealpha", "fakezeta"]
    assert all(type(op) is OpInfo for op in ops)
    assert ops[0].package == "ascend-op-fakealpha" and ops[0].module == "ascend_ops.fakealpha"
    assert ops[0].version == "unknown"          # not an installed distribution


def test_broken_entry_points_become_error_rows(fake_op, make_op, entry_points):
    fake_op("fakegood")
    make_op("fakebroken", {"_info.py": "raise RuntimeError('bad _info')\n"})
    make_op("fakewrongtype", {"_info.py": "OP = 42\n"})
    entry_points(("fakebroken", "ascend_ops.fakebroken._info:OP"),
                 ("fakewrongtype", "ascend_ops.fakewrongtype._info:OP"),
                 ("fakemissing", "ascend_ops.fakemissing._info:OP"),
                 ("fakealias", "ascend_ops.fakegood._info:OP"),
                 ("fakegood", "ascend_ops.fakegood._info:OP"))     # exact duplicate: ignored
    ops = {op.name: op for op in installed_ops()}
    assert sorted(ops) == ["fakealias", "fakebroken", "fakegood", "fakemissing", "fakewrongtype"]
    assert type(ops["fakegood"]) is OpInfo
    assert isinstance(ops["fakebroken"], BrokenOp) and "RuntimeError: bad _info" in ops["fakebroken"].error
    assert "is a int, not an OpInfo" in ops["fakewrongtype"].error
    assert "ModuleNotFoundError" in ops["fakemissing"].error
    assert "describes op 'fakegood'" in ops["fakealias"].error
    row = ops["fakebroken"].check()
    assert row == [CheckResult("fakebroken", "-", "-", "failed", "broken entry point: " +
                               ops["fakebroken"].error)]


def test_conflicting_registrations(fake_op, entry_points):
    fake_op("fakedup")
    entry_points(("fakedup", "ascend_ops.other._info:OP"))
    (op,) = installed_ops()
    assert isinstance(op, BrokenOp) and "registered twice" in op.error


def test_opinfo_validates():
    with pytest.raises(ValueError, match="backends should be among"):
        OpInfo("x", "ascend-op-x", backends=("cpu", "cuda"))
    with pytest.raises(ValueError, match="frameworks should be among"):
        OpInfo("x", "ascend-op-x", frameworks=("jax",))


def test_backends_built(fake_op, common_lib):
    fake_op("fakebuilt", files={"_core.py": _core()})
    (op,) = installed_ops()
    status = op.backends()
    assert status["cpu"] == "built" and status["emu"] == "built"
    assert status["npu"] == "not built: CANN was not found when the op was built"


def test_npu_built_without_device(fake_op, common_lib, monkeypatch, build_info_text):
    fake_op("fakenpu", files={"_core.py": _core(), "_build_info.py": build_info_text(npu=True)})
    (op,) = installed_ops()
    assert op.backends()["npu"] == "no Ascend device"
    monkeypatch.setattr(registry, "ascend_device_present", lambda: True)
    assert op.backends()["npu"] == "built"


def test_emulator_left_out(fake_op, common_lib, build_info_text):
    fake_op("fakenoemu", files={"_core.py": _core(), "_build_info.py": build_info_text(emu=False)})
    (op,) = installed_ops()
    assert op.backends() == {"cpu": "built",
                             "emu": "not built: the op was built with AOP_WITH_EMU=OFF",
                             "npu": "not built: CANN was not found when the op was built"}


def test_backends_when_core_is_missing_or_mismatched(fake_op, common_lib):
    fake_op("fakenocore2")
    fake_op("fakebadabi", files={"_core.py": _core(abi=12345)})
    ops = {op.name: op for op in installed_ops()}
    missing = ops["fakenocore2"].backends()
    assert missing["cpu"] == missing["emu"] == (
        "not built: ascend_ops.fakenocore2._core is not built: ascend-op-fakenocore2 "
        "(version unknown) was installed without its native core; rebuild it with a C++ "
        "compiler and ascend-op-common present: pip install --no-build-isolation "
        "--force-reinstall --no-deps ascend-op-fakenocore2")
    assert missing["npu"] == "not built: CANN was not found when the op was built"
    bad = ops["fakebadabi"].backends()
    assert bad["cpu"].startswith("error: ") and "ABI 12345" in bad["cpu"] and bad["emu"] == bad["cpu"]


def test_backends_without_build_info(make_op, common_lib):
    make_op("fakenoinfo", {"_core.py": _core()})
    op = OpInfo("fakenoinfo", "ascend-op-fakenoinfo", backends=("cpu",))
    assert op.backends() == {"cpu": "unknown: ascend_ops.fakenoinfo._build_info is missing"}
    assert op.build_info() is None


def test_frameworks_status_without_importing(fake_op, monkeypatch):
    fake_op("fakefw", files={"_torch.py": "raise RuntimeError('must not be imported')\n"})
    (op,) = installed_ops()
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: object() if name in ("torch", "mindspore") else real(name, *a))
    assert op.frameworks() == {"torch": "built", "mindspore": "not built"}
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "mindspore" else real(name, *a))
    assert op.frameworks()["mindspore"] == "mindspore not installed"


def test_frameworks_built_for_another_version(fake_op, monkeypatch, build_info_text):
    fake_op("fakefwver", files={"_torch.py": "", "_ms.py": "",
                                "_build_info.py": build_info_text(torch="2.12.0", mindspore="2.10.0")})
    (op,) = installed_ops()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a, _real=importlib.util.find_spec:
                        object() if name in ("torch", "mindspore") else _real(name, *a))
    monkeypatch.setattr(registry, "version",
                        lambda name: {"torch": "2.13.0+cpu", "mindspore": "2.10.0"}[name])
    assert op.frameworks() == {"torch": "built for torch 2.12.0, installed 2.13.0",
                               "mindspore": "built"}


def test_check_outcomes(fake_op):
    fake_op("fakecheck")
    (op,) = installed_ops()
    results = {(r.backend, r.mode): r for r in op.check()}
    assert results[("cpu", "core")] == CheckResult("fakecheck", "cpu", "core", "passed", "max |diff| 0")
    failed = results[("emu", "core")]
    assert failed.status == "failed" and "AssertionError: key_cache differs" in failed.detail
    assert results[("cpu", "mindspore graph")].status == "skipped"
    assert results[("cpu", "mindspore graph")].detail == "needs two devices"
    assert results[("cpu", "torch eager")].status == "skipped"
    assert "pip install torch==2.13.0" in results[("cpu", "torch eager")].detail
    assert results[("npu", "torch eager")] == CheckResult(
        "fakecheck", "npu", "torch eager", "skipped", "no Ascend device")
    assert [r.backend for r in op.check(backends=["emu"])] == ["emu"]


def test_missing_core_fails_a_check(make_op, common_lib):
    make_op("fakecorecheck", {"_check.py": (
        "from ascend_ops.common.registry import CheckCase\n"
        "from ascend_ops.common.loader import load_native\n"
        "def cases():\n"
        "    return [CheckCase('cpu', 'core', lambda: load_native('fakecorecheck', 'core'))]\n")})
    op = OpInfo("fakecorecheck", "ascend-op-fakecorecheck", checks="ascend_ops.fakecorecheck._check:cases")
    (result,) = op.check()
    assert result.status == "failed" and "_core is not built" in result.detail


def test_check_collection_errors_and_no_cases(make_op):
    make_op("fakecollect", {"_check.py": "def cases():\n    return [1]\n",
                            "_raise.py": "def cases():\n    raise KeyError('boom')\n"})
    bad_type = OpInfo("fakecollect", "p", checks="ascend_ops.fakecollect._check:cases").check()
    assert bad_type[0].status == "failed" and "not CheckCase" in bad_type[0].detail
    raising = OpInfo("fakecollect", "p", checks="ascend_ops.fakecollect._raise:cases").check()
    assert raising[0].status == "failed" and "KeyError" in raising[0].detail
    bad_target = OpInfo("fakecollect", "p", checks="no_colon_here").check()
    assert bad_target[0].status == "failed" and "module:function" in bad_target[0].detail
    assert OpInfo("fakecollect", "p").check() == [
        CheckResult("fakecollect", "-", "-", "skipped", "no check cases")]


def test_check_case_is_plain_data():
    case = CheckCase("cpu", "core", lambda: None)
    assert (case.backend, case.mode) == ("cpu", "core")
    assert not frameworks.ascend_device_present()
