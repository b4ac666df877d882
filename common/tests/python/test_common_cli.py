"""The ascend-ops command: list, stats, check, platforms, --help."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ascend_ops.common import _clib
from ascend_ops.common.cli import NO_OPS, main


def _core():
    return f"COMMON_ABI = {_clib.common_abi()}\nCOMMON_VERSION = 'x'\nBACKENDS = ('cpu', 'emu')\n"


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("command", ["list", "stats", "check", "platforms"])
def test_help(capsys, command):
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    assert f"usage: ascend-ops {command}" in capsys.readouterr().out


def test_no_command_prints_help(capsys):
    code, out, _ = run(capsys)
    assert code == 2 and "list" in out and "platforms" in out


def test_version(capsys, common_lib):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"ascend-op-common {_clib.common_version()} (C ABI {_clib.ABI})"


def test_list_without_ops(capsys, entry_points, common_lib):
    code, out, _ = run(capsys, "list")
    assert code == 0 and NO_OPS in out
    assert f"ascend-op-common {_clib.common_version()} (C ABI {_clib.ABI})" in out
    assert "platform: Ascend910B2" in out and "Ascend device no" in out


def test_list_shows_backends_and_frameworks(capsys, fake_op, entry_points, make_op, common_lib):
    fake_op("fakelisted", files={"_core.py": _core(), "_torch.py": ""})
    make_op("fakelistbroken", {"_info.py": "raise ImportError('nope')\n"})
    entry_points(("fakelistbroken", "ascend_ops.fakelistbroken._info:OP"))
    code, out, _ = run(capsys, "list")
    assert code == 0
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("fake")}
    assert lines["fakelisted"].split()[1:7] == [
        "ascend-op-fakelisted", "unknown", "built", "built", "not", "built"]
    assert "fakelisted: npu not built: CANN was not found when the op was built" in out
    assert "fakelisted: mindspore adapter not built" in out and "mindspore==2.10.0" in out
    assert lines["fakelisted"].split()[-2:] == ["not", "built"]  # mindspore_ascend, the last column
    assert "fakelisted: mindspore_ascend adapter not built: CANN was not found when the op was built" in out
    assert "error" in lines["fakelistbroken"]
    assert "fakelistbroken: ascend_ops.fakelistbroken._info:OP: ImportError: nope" in out


def test_list_json(capsys, fake_op, common_lib):
    fake_op("fakejson", files={"_core.py": _core()})
    code, out, _ = run(capsys, "list", "--json")
    (record,) = json.loads(out)["ops"]
    assert code == 0 and record["op"] == "fakejson"
    assert record["backends"] == {"cpu": "built", "emu": "built",
                                  "npu": "not built: CANN was not found when the op was built"}
    assert record["npu_adapters"]["mindspore_ascend"] == "not built: CANN was not found when the op was built"
    assert record["npu_adapters"]["torch_npu"].startswith("not built: ")


def test_stats(capsys, common_lib):
    code, out, _ = run(capsys, "stats")
    assert code == 0
    for text in ("caches", "tiling", "operator", "pools", "default", "hit rate"):
        assert text in out
    code, out, _ = run(capsys, "stats", "--json")
    data = json.loads(out)
    assert [c["name"] for c in data["caches"][:2]] == ["tiling", "operator"]
    assert data["pools"][0]["name"] == "default"


def test_platforms(capsys, common_lib):
    code, out, _ = run(capsys, "platforms")
    rows = {line.split()[-10]: line.split()[-9:] for line in out.splitlines()
            if "Atlas" in line}
    assert code == 0 and rows["Ascend910B4"][:4] == ["Atlas", "A2", "40", "20"]
    assert rows["Ascend910B2"][:5] == ["Atlas", "A2", "48", "24", "196608"]
    assert "* current: Ascend910B2" in out
    code, out, _ = run(capsys, "platforms", "--json")
    data = json.loads(out)
    assert data["current"]["soc"] == "Ascend910B2"
    presets = {p["soc"]: p for p in data["presets"]}
    assert presets["Ascend910B2"]["aiv_cores"] == 48 and presets["Ascend910B2"]["ub_bytes"] == 196608


def test_check_without_ops(capsys, entry_points):
    code, out, _ = run(capsys, "check")
    assert code == 0 and out.strip() == NO_OPS


def test_check_failure_exits_1_and_names_the_op(capsys, fake_op):
    fake_op("fakebad")
    fake_op("fakefine", fails=False)
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert "FAILED: fakebad" in out and "fakefine" not in out.split("FAILED:")[1]
    assert "3 passed, 1 failed, 6 skipped" in out
    assert "AssertionError: key_cache differs at index (0, 1)" in out
    assert "no Ascend device" in out and "needs two devices" in out


def test_check_selected_ops(capsys, fake_op):
    fake_op("fakebad2")
    fake_op("fakefine2", fails=False)
    code, out, _ = run(capsys, "check", "fakefine2")
    assert code == 0 and "fakebad2" not in out and "2 passed, 0 failed, 3 skipped" in out
    code, out, _ = run(capsys, "check", "ascend-op-fakebad2", "--backend", "cpu")
    assert code == 0 and "emu" not in out
    code, _, err = run(capsys, "check", "fakenothere")
    assert code == 2 and "not installed: fakenothere" in err and "fakebad2" in err


def test_check_a_package_checks_every_op_it_ships(capsys, fake_op):
    # Two ops in one distribution (as lightning_indexer and lightning_indexer_quant): the
    # package's name selects both, an op's name only itself.
    shared = ('from ascend_ops.common.registry import OpInfo\n'
              'OP = OpInfo(name="{name}", package="ascend-op-fakepair", checks="ascend_ops.{name}._check:cases")\n')
    for name in ("fakepairone", "fakepairtwo"):
        fake_op(name, fails=False, files={"_info.py": shared.format(name=name)})
    fake_op("fakeother", fails=False)
    code, out, _ = run(capsys, "check", "ascend-op-fakepair")
    assert code == 0 and "fakepairone" in out and "fakepairtwo" in out and "fakeother" not in out
    assert "4 passed, 0 failed, 6 skipped" in out
    code, out, _ = run(capsys, "check", "fakepairtwo")
    assert code == 0 and "fakepairone" not in out and "2 passed, 0 failed, 3 skipped" in out


def test_module_entry_point(child_env, common_lib):
    out = subprocess.run([sys.executable, "-m", "ascend_ops.common", "platforms"], env=child_env(),
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "Ascend910B4" in out.stdout
