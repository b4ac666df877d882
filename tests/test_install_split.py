"""The runtime split, installed for real: fresh venvs get wheels of ascend-op-common and one op
(reshape_and_cache) and nothing else of ours, and the op works there.

- PyTorch only, numpy 2.x: the op runs from torch and from NumPy; neither hypothesis, matplotlib,
  pytest nor ascend-op-devkit is installed, and `pip check` is satisfied by what the two wheels
  declare.
- MindSpore 2.10 with numpy 1.26 (the MindSpore variant's constraint): the op runs from MindSpore
  PyNative and from NumPy.

The wheels are built the way the recipes build the packages (`pip install . --no-deps
--no-build-isolation`, here `pip wheel`, with the variant's switches: framework=all, no CANN) in
build/install-check/ (kept: a re-run rebuilds only what changed); the venvs get the frameworks
from this machine's wheel index. Slow (two builds, two venvs): minutes, not seconds.
"""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "build" / "install-check"
TORCH = "torch==2.13.0"
MINDSPORE = "mindspore==2.10.0"

# The op called from every front door the venv has, against a NumPy reference of the cache write.
_RUN_OP = textwrap.dedent("""
    import importlib.util, sys
    import numpy as np
    from ascend_ops.reshape_and_cache import reshape_and_cache

    rng = np.random.default_rng(0)
    tokens, heads, size, blocks, block_size = 5, 2, 8, 4, 4
    key = rng.standard_normal((tokens, heads, size)).astype(np.float16)
    value = rng.standard_normal((tokens, heads, size)).astype(np.float16)
    slots = np.array([3, 0, 9, 14, 6], dtype=np.int32)
    want_k = np.zeros((blocks, block_size, heads, size), np.float16)
    want_v = np.zeros_like(want_k)
    want_k.reshape(-1, heads, size)[slots] = key
    want_v.reshape(-1, heads, size)[slots] = value

    def numpy_call():
        k, v = np.zeros_like(want_k), np.zeros_like(want_v)
        reshape_and_cache(key, value, k, v, slots)
        return k, v

    def torch_call():
        import torch
        k, v = torch.zeros(want_k.shape, dtype=torch.float16), torch.zeros(want_v.shape, dtype=torch.float16)
        reshape_and_cache(torch.from_numpy(key), torch.from_numpy(value), k, v, torch.from_numpy(slots))
        return k.numpy(), v.numpy()

    def mindspore_call():
        import mindspore as ms
        k, v = ms.Parameter(ms.Tensor(np.zeros_like(want_k))), ms.Parameter(ms.Tensor(np.zeros_like(want_v)))
        reshape_and_cache(ms.Tensor(key), ms.Tensor(value), k, v, ms.Tensor(slots))
        return k.asnumpy(), v.asnumpy()

    calls = {"numpy": numpy_call, "torch": torch_call, "mindspore": mindspore_call}
    for name in sys.argv[1:]:
        k, v = calls[name]()
        np.testing.assert_array_equal(k, want_k)
        np.testing.assert_array_equal(v, want_v)
        print(f"{name}: ok")
    for absent in ("hypothesis", "matplotlib", "pytest", "ascend_ops.devkit"):
        assert absent not in sys.modules, absent
        assert importlib.util.find_spec(absent) is None, absent
    print("numpy", np.__version__)
""")


def _run(cmd, **kwargs) -> subprocess.CompletedProcess:
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, **kwargs)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _wheel(package: str, *defines: str) -> None:
    settings = [f"--config-settings=cmake.define.{d}" for d in defines]
    _run([sys.executable, "-m", "pip", "wheel", ROOT / package, "--no-deps", "--no-build-isolation",
          "--wheel-dir", WORK / "wheels", f"--config-settings=build-dir={WORK / 'build' / Path(package).name}",
          *settings], timeout=1800)


@pytest.fixture(scope="module")
def wheels() -> Path:
    pytest.importorskip("torch", reason="the op's torch adapter is built against the installed torch")
    pytest.importorskip("mindspore", reason="the op's MindSpore adapter is built against the installed mindspore")
    for old in (WORK / "wheels").glob("*.whl"):
        old.unlink()
    _wheel("common")  # the release build: no simulated runtime
    _wheel("ops/reshape_and_cache", "AOP_WITH_TORCH=ON", "AOP_WITH_MINDSPORE=ON", "AOP_WITH_NPU=OFF",
           "AOP_WITH_TORCH_NPU=OFF", "AOP_WITH_NPU_SIM=OFF")
    names = sorted(w.name for w in (WORK / "wheels").glob("*.whl"))
    assert [n.split("-")[0] for n in names] == ["ascend_op_common", "ascend_op_reshape_and_cache"], names
    return WORK / "wheels"


# What common's Python may import beyond the standard library: numpy (its one dependency), itself,
# its optional extras, and torch_npu's torchair (imported only where torch_npu is installed).
_EXTRAS = {"torch": "torch", "mindspore": "mindspore", "ml_dtypes": "bfloat16"}
_DEV_MODULE = re.compile(r"(^|/)(tests?|testing|bench\w*|\w*_bench|fuzz\w*|soak|stress|reliability|demo|compat"
                         r"|compile_matrix|\w*_testing|conftest)(/|\.py$)")


def test_the_runtime_wheel_holds_the_runtime_and_declares_its_imports(wheels):
    (wheel,) = wheels.glob("ascend_op_common-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        metadata = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        sources = {n: zf.read(n).decode() for n in names if n.endswith(".py")}
    assert sources and all(n.startswith("ascend_ops/common/") for n in sources), sorted(sources)
    assert not [n for n in names if _DEV_MODULE.search(n)], [n for n in names if _DEV_MODULE.search(n)]
    requires = re.findall(r"^Requires-Dist: ([A-Za-z0-9_.-]+)(.*)$", metadata, re.M)
    hard = [(name, rest) for name, rest in requires if "extra ==" not in rest]
    assert [name for name, _ in hard] == ["numpy"] and "<" not in hard[0][1], requires  # numpy 2 allowed
    extras = set(re.findall(r"^Provides-Extra: (\S+)$", metadata, re.M))
    for name, text in sources.items():
        for node in ast.walk(ast.parse(text)):
            modules = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                       [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else [])
            for top in {m.split(".")[0] for m in modules}:
                if top in sys.stdlib_module_names or top in ("numpy", "ascend_ops", "torchair"):
                    continue
                assert top in _EXTRAS and _EXTRAS[top] in extras, f"{name} imports {top}, which common does not declare"


def _venv(name: str, wheels: Path, *requirements: str) -> Path:
    """A fresh venv with ``requirements`` and the two wheels, dependencies resolved by pip."""
    venv = WORK / name
    _run([sys.executable, "-m", "venv", "--clear", venv])
    python = venv / "bin" / "python"
    _run([python, "-m", "pip", "install", "--quiet", "--find-links", wheels, *requirements,
          *sorted(wheels.glob("*.whl"))], timeout=1800)
    _run([python, "-m", "pip", "check"])
    return python


def test_torch_only_with_numpy_2(wheels):
    python = _venv("venv-torch-numpy2", wheels, "numpy>=2,<3", TORCH)
    out = _run([python, "-c", _RUN_OP, "numpy", "torch"], cwd=WORK).stdout
    assert "numpy: ok" in out and "torch: ok" in out and "numpy 2." in out, out
    installed = _run([python, "-m", "pip", "list", "--format=freeze"]).stdout.lower()
    assert "mindspore" not in installed and "ascend-op-devkit" not in installed, installed


def test_mindspore_with_numpy_1(wheels):
    python = _venv("venv-mindspore-numpy1", wheels, "numpy==1.26.4", MINDSPORE)
    out = _run([python, "-c", _RUN_OP, "numpy", "mindspore"], cwd=WORK).stdout
    assert "numpy: ok" in out and "mindspore: ok" in out and "numpy 1.26" in out, out
    installed = _run([python, "-m", "pip", "list", "--format=freeze"]).stdout.lower()
    assert "torch==" not in installed and "ascend-op-devkit" not in installed, installed
