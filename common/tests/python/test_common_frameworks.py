"""Framework / CANN / device detection, and that importing ascend_ops.common stays cheap."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

import ascend_ops.common
from ascend_ops.common import frameworks
from ascend_ops.common.errors import FrameworkMissing

HEAVY = ("torch", "mindspore", "torch_npu", "numpy")


def _run(code: str, env) -> dict:
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_ascend_ops_is_a_namespace_package():
    import ascend_ops

    assert getattr(ascend_ops, "__file__", None) is None
    source = Path(ascend_ops.common.__file__).resolve().parent
    assert not (source.parent / "__init__.py").exists()


def test_import_and_detection_import_no_framework(child_env, tmp_path):
    # A torch_npu that explodes when imported: detection must only look at it.
    fake = tmp_path / "torch_npu"
    (fake / "dynamo" / "torchair").mkdir(parents=True)
    (fake / "__init__.py").write_text("raise RuntimeError('torch_npu was imported')\n")
    (fake / "dynamo" / "torchair" / "__init__.py").write_text("")
    code = (
        "import json, sys\n"
        "import ascend_ops.common as c\n"
        f"after_import = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "from ascend_ops.common import frameworks, registry, cli\n"
        "env = frameworks.detect()\n"
        "registry.installed_ops()\n"
        f"after_detect = [m for m in {HEAVY[:3]!r} if m in sys.modules]\n"
        "print(json.dumps({'import': after_import, 'detect': after_detect,\n"
        "                  'torch_npu': env.versions['torch_npu'], 'torchair': env.torchair,\n"
        "                  'npu_installed': frameworks.is_installed('torch_npu')}))\n"
    )
    env = child_env()
    env["PYTHONPATH"] = str(tmp_path) + ":" + env["PYTHONPATH"]
    result = _run(code, env)
    assert result["import"] == [], "import ascend_ops.common imported " + str(result["import"])
    assert result["detect"] == [], "detection imported " + str(result["detect"])
    assert result["npu_installed"] is True and result["torchair"] is True


def test_is_installed_does_not_import(monkeypatch):
    assert frameworks.is_installed("json")
    assert not frameworks.is_installed("surely_not_a_module_xyz")
    with pytest.raises(ValueError, match="top-level"):
        frameworks.is_installed("torch.nn")


def test_versions_come_from_metadata():
    import numpy

    assert frameworks.version("numpy") == numpy.__version__
    assert frameworks.version("surely-not-a-distribution-xyz") is None


def test_cann_from_environment(monkeypatch, tmp_path):
    for var in frameworks.CANN_ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(frameworks, "CANN_DEFAULT_HOME", tmp_path / "absent")
    assert frameworks.cann() is None

    home = tmp_path / "ascend-toolkit" / "latest"
    (home / "opp").mkdir(parents=True)
    (home / "version.cfg").write_text("# CANN\nversion=8.0.RC2\n")
    monkeypatch.setenv("ASCEND_OPP_PATH", str(home / "opp"))
    found = frameworks.cann()
    assert found is not None and found.home == home and found.source == "ASCEND_OPP_PATH"
    assert found.version == "8.0.RC2"

    monkeypatch.setenv("ASCEND_HOME_PATH", str(home))
    assert frameworks.cann().source == "ASCEND_HOME_PATH"
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path / "missing"))
    assert frameworks.cann().source == "ASCEND_OPP_PATH"  # a stale variable is skipped


def test_cann_default_path(monkeypatch, tmp_path):
    for var in frameworks.CANN_ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "latest").mkdir()
    monkeypatch.setattr(frameworks, "CANN_DEFAULT_HOME", tmp_path)
    found = frameworks.cann()
    assert found.home == tmp_path / "latest" and found.source == "default path"


def test_device_needs_cann_nodes_and_a_framework(monkeypatch, tmp_path):
    cann = frameworks.CannInfo(home=tmp_path, source="test")
    monkeypatch.setattr(frameworks, "cann", lambda: cann)
    monkeypatch.setattr(frameworks, "ascend_device_nodes", lambda dev=None: [Path("/dev/davinci0")])
    monkeypatch.setattr(frameworks, "mindspore_has_ascend_plugin", lambda: False)
    monkeypatch.setattr(frameworks, "is_installed", lambda name: name == "torch_npu")
    assert frameworks.ascend_device_present()
    monkeypatch.setattr(frameworks, "is_installed", lambda name: False)
    assert not frameworks.ascend_device_present()          # no framework with an NPU backend
    monkeypatch.setattr(frameworks, "mindspore_has_ascend_plugin", lambda: True)
    assert frameworks.ascend_device_present()
    monkeypatch.setattr(frameworks, "ascend_device_nodes", lambda dev=None: [])
    assert not frameworks.ascend_device_present()          # no driver node
    monkeypatch.setattr(frameworks, "ascend_device_nodes", lambda dev=None: [Path("/dev/davinci0")])
    monkeypatch.setattr(frameworks, "cann", lambda: None)
    assert not frameworks.ascend_device_present()          # no CANN


def test_device_nodes(tmp_path):
    for name in ("davinci0", "davinci12", "davinci_manager", "davinci-x"):
        (tmp_path / name).write_text("")
    assert [p.name for p in frameworks.ascend_device_nodes(tmp_path)] == ["davinci0", "davinci12"]


def test_no_device_on_this_machine():
    assert not frameworks.ascend_device_present()


def test_import_framework_missing(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "mindspore" else real(name, *a))
    with pytest.raises(FrameworkMissing, match=r"pip install mindspore==2\.10\.0"):
        frameworks.import_framework("mindspore")
    with pytest.raises(ValueError, match="framework should be"):
        frameworks.import_framework("jax")


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
@pytest.mark.parametrize("preset, expected", [(None, "0"), ("1", "1")])
def test_import_torch_disables_backend_autoload(child_env, preset, expected):
    env = child_env()
    env.pop("TORCH_DEVICE_BACKEND_AUTOLOAD", None)
    if preset is not None:
        env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = preset
    code = ("import json, os\nfrom ascend_ops.common.frameworks import import_framework\n"
            "torch = import_framework('torch')\n"
            "print(json.dumps({'autoload': os.environ['TORCH_DEVICE_BACKEND_AUTOLOAD'],"
            " 'torch': torch.__name__}))")
    assert _run(code, env) == {"autoload": expected, "torch": "torch"}
