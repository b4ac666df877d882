"""Every op's NPU host code compiles against real ACL headers.

No CANN here, but the torch_npu wheel (downloaded and unpacked, never installed, by
``ci/fetch_torch_npu_headers.py``, as for the PrivateUse1 adapters' check) ships a copy of
CANN's ACL headers (``include/acl``). An op's run_npu is common's ``npu::run_kernel`` over the
op's launch description (``op.h``), instantiated by the translation unit the build generates from
``common/cmake/npu_launch.cpp.in``. Compiling that against them checks its ``aclrt*`` calls, and
its call of the kernel's ``<<<>>>`` wrapper against the declaration in ``kernel/<op>_launch.h``
(the wrapper itself, in the kernel source, needs CANN's compiler). Nothing is linked:
libascendcl is not in the wheel.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ascend_ops.common.registry import installed_ops
from ascend_ops.devkit import npu_compile_check

ROOT = Path(__file__).resolve().parent.parent
OPS = [npu_compile_check.op_source(ROOT, op.name) for op in installed_ops()]
OPS_WITH_KERNELS = [op for op in OPS if op.has_kernel]
NPU_LAUNCH_TEMPLATE = ROOT / "common" / "cmake" / "npu_launch.cpp.in"


@pytest.fixture(scope="module")
def torch_npu_root() -> Path:
    root = npu_compile_check.torch_npu_root(ROOT)
    if not (root / "include" / "acl" / "acl.h").is_file():
        pytest.skip(f"{root}/include has no acl/acl.h: this torch_npu wheel ships no ACL headers")
    return root


def test_every_op_with_a_kernel_has_a_launch_description():
    assert OPS_WITH_KERNELS
    for op in OPS_WITH_KERNELS:
        assert (op.dir / op.description).is_file(), f"{op.name} has a kernel but no {op.description}"
    # every kernel source in the tree is some op's
    assert {p.parent.parent for p in ROOT.glob("ops/*/kernel/*_kernel.cpp")} <= {op.dir for op in OPS_WITH_KERNELS}


@pytest.mark.parametrize("op", OPS_WITH_KERNELS, ids=lambda op: op.name)
def test_npu_launch_compiles_against_acl_headers(op, torch_npu_root, tmp_path):
    op_dir = op.dir
    source = tmp_path / "npu_launch.cpp"
    source.write_text(op.render(NPU_LAUNCH_TEMPLATE.read_text()))
    cmd = [
        "g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-DAOP_WITH_NPU=1",
        f"-I{op_dir}", f"-I{ROOT / 'common' / 'include'}", f"-isystem{torch_npu_root / 'include'}",
        str(source),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, f"{op.name}'s run_npu does not compile against ACL:\n{proc.stderr}"


# --- common's NPU glue and the simulated runtime's ACL subset ---------------------------------
GLUE = sorted((ROOT / "common" / "include" / "ascend_ops" / "npu").glob("*.hpp"))
SIM_ACL = ROOT / "common" / "ascend_sim" / "include" / "acl" / "acl.h"


@pytest.mark.parametrize("header", GLUE, ids=lambda p: p.name)
@pytest.mark.parametrize("acl", ["real", "sim"])
def test_common_npu_glue_compiles_against_acl_headers(header, acl, request):
    """Every header of common/include/ascend_ops/npu compiles alone against the wheel's real ACL
    headers and against the simulated runtime's subset (the ops' run_npu uses both)."""
    include = (request.getfixturevalue("torch_npu_root") / "include") if acl == "real" else SIM_ACL.parent.parent
    cmd = ["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-x", "c++",
           f"-I{ROOT / 'common' / 'include'}", f"-isystem{include}", "-include", str(header), "/dev/null"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, f"{header.relative_to(ROOT)} does not compile against {acl} ACL:\n{proc.stderr}"


def _sim_declarations():
    import re

    text = SIM_ACL.read_text()
    functions = re.findall(r"ACL_FUNC_VISIBILITY\s+aclError\s+(\w+)\(([^;]*?)\);", text)
    constants = re.findall(r"^\s+(ACL_[A-Z0-9_]+)\s*(?:=\s*[^,]+)?,", text, flags=re.M)  # enumerators
    constants += re.findall(r"static const int (ACL_\w+)", text) + re.findall(r"#define (ACL_ERROR_\w+)", text)
    return functions, constants


def test_sim_acl_subset_matches_the_real_declarations(torch_npu_root, tmp_path):
    """Every function the simulated acl/acl.h declares has exactly the real API's type, every
    enumerator it names exists with the same value: code built against the sim builds against CANN."""
    functions, constants = _sim_declarations()
    assert len(functions) >= 20 and constants
    probe = tmp_path / "probe.cpp"
    lines = ['#include "acl/acl.h"', "#include <type_traits>"]
    lines += [f"static_assert(std::is_same_v<decltype(&{name}), aclError (*)({' '.join(args.split())})>, \"{name}\");"
              for name, args in functions]
    probe.write_text("\n".join(lines) + "\n")
    cmd = ["g++", "-std=c++17", "-fsyntax-only", f"-isystem{torch_npu_root / 'include'}", str(probe)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, f"the simulated acl/acl.h differs from the real one:\n{proc.stderr[-3000:]}"
    # the same enumerator values: compile a program against each header that prints them
    source = tmp_path / "values.cpp"
    source.write_text('#include <cstdio>\n#include "acl/acl.h"\nint main() {\n'
                      + "".join(f'  std::printf("{c}=%d\\n", (int){c});\n' for c in constants) + "}\n")
    outputs = []
    for include in (torch_npu_root / "include", SIM_ACL.parent.parent):
        exe = tmp_path / f"values_{len(outputs)}"
        proc = subprocess.run(["g++", "-std=c++17", f"-isystem{include}", str(source), "-o", str(exe)],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-3000:]
        outputs.append(subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout)
    assert outputs[0] == outputs[1]
