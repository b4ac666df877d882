"""Every op's NPU host code (``host/npu_launch.cpp``) compiles against real ACL headers.

No CANN here, but the torch_npu wheel (downloaded and unpacked, never installed, by
``ci/fetch_torch_npu_headers.py``, as for the PrivateUse1 adapters' check) ships a copy of
CANN's ACL headers (``include/acl``). Compiling ``npu_launch.cpp`` against them checks its
``aclrt*`` calls, and its call of the kernel's ``<<<>>>`` wrapper against the declaration in
``kernel/<op>_launch.h`` (the wrapper itself, in the kernel source, needs CANN's compiler).
Nothing is linked: libascendcl is not in the wheel.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ascend_ops.common import npu_compile_check

ROOT = Path(__file__).resolve().parent.parent
NPU_HOSTS = sorted(ROOT.glob("ops/*/host/npu_launch.cpp"))


@pytest.fixture(scope="module")
def torch_npu_root() -> Path:
    root = npu_compile_check.torch_npu_root(ROOT)
    if not (root / "include" / "acl" / "acl.h").is_file():
        pytest.skip(f"{root}/include has no acl/acl.h: this torch_npu wheel ships no ACL headers")
    return root


def test_every_op_with_a_kernel_has_npu_host_code():
    ops_with_kernels = {p.parent.parent.name for p in ROOT.glob("ops/*/kernel/*_kernel.cpp")}
    assert ops_with_kernels == {p.parent.parent.name for p in NPU_HOSTS}


@pytest.mark.parametrize("source", NPU_HOSTS, ids=lambda p: p.parent.parent.name)
def test_npu_launch_compiles_against_acl_headers(source, torch_npu_root):
    op_dir = source.parent.parent
    cmd = [
        "g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-DAOP_WITH_NPU=1",
        f"-I{op_dir}", f"-I{ROOT / 'common' / 'include'}", f"-isystem{torch_npu_root / 'include'}",
        str(source),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, f"{source.relative_to(ROOT)} does not compile against ACL:\n{proc.stderr}"
