"""Compile-checking an op's torch_npu adapter where there is no NPU: the PrivateUse1 registration
the build generates for an op from ``common/cmake/torch_npu_module.cpp.in`` (common's
``torch_npu_op.hpp`` over the op's ``op.h``).

The torch_npu wheel is downloaded and unpacked (never installed) by the repository's
``ci/fetch_torch_npu_headers.py``; the adapter is compiled against its headers with the flags
the real build uses, and every symbol the object needs must be ours (``aop::``) or exported by
libtorch_npu, torch or the C++ runtime, so the adapter would link where torch_npu is installed.
Used by each op's torch tests; a missing tool or no network skips, naming the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import List, Tuple

__all__ = ["OpSource", "op_source", "torch_npu_root", "compile_adapter", "undefined_symbols"]


@dataclass(frozen=True)
class OpSource:
    """Where an installed op's sources are in the repository: its package directory (a package may
    ship several ops) and its description there (``op.h``, ``op_quant.h``)."""

    name: str
    dir: Path
    description: str
    has_kernel: bool

    def render(self, template: str) -> str:
        """A template of common/cmake as ascend_ops_add_op() renders it for this op."""
        return template.replace("@AOP_OP@", self.name).replace("@A_DESCRIPTION@", self.description)


def op_source(repo: Path, op: str) -> OpSource:
    """The package directory (the ``ops/*/pyproject.toml`` whose ``ascend_ops.ops`` entry points
    name ``op``), the description and whether an AscendC kernel was built (the op's build info)."""
    from ascend_ops.common.loader import build_info

    for pyproject in sorted(Path(repo).glob("ops/*/pyproject.toml")):
        if f'\n{op} = "ascend_ops.{op}._info:OP"' in pyproject.read_text():
            info = build_info(op)
            return OpSource(op, pyproject.parent, getattr(info, "DESCRIPTION", "op.h"),
                            bool(info is not None and info.BACKENDS.get("emu")))
    raise LookupError(f"no ops/*/pyproject.toml declares the op {op!r}")


def torch_npu_root(repo: Path) -> Path:
    """Unpack the torch_npu wheel (headers and libraries) and return its package directory."""
    import pytest

    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed: the NPU adapter cannot be compile-checked")
    fetch = Path(repo) / "ci" / "fetch_torch_npu_headers.py"
    proc = subprocess.run([sys.executable, str(fetch), "--with-lib"], capture_output=True, text=True)
    if proc.returncode == 3:
        pytest.skip(f"torch_npu wheel could not be downloaded (no network): {proc.stderr.strip()[-400:]}")
    assert proc.returncode == 0, f"{fetch.name} failed:\n{proc.stdout}\n{proc.stderr}"
    return Path(proc.stdout.strip().splitlines()[-1])


def compile_adapter(op: OpSource, repo: Path, npu_root: Path) -> Path:
    """Compile the op's generated PrivateUse1 registration to
    ``repo/build/torch_npu_compile_check_<op>/npu.o``."""
    import torch
    from torch.utils.cpp_extension import include_paths

    op_dir, repo = op.dir, Path(repo)
    build = repo / "build" / f"torch_npu_compile_check_{op.name}"
    build.mkdir(parents=True, exist_ok=True)
    out = build / "npu.o"
    source = build / "torch_npu_module.cpp"
    template = repo / "common" / "cmake" / "torch_npu_module.cpp.in"
    source.write_text(op.render(template.read_text()))
    cmd = [
        "g++", "-std=c++20", "-c", "-fPIC", "-O1", "-fvisibility=hidden", "-Wall", "-Wextra", "-Werror",
        f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}",
        f"-I{op_dir}", f"-I{repo / 'common' / 'include'}",
        *[f"-isystem{p}" for p in include_paths()],
        f"-isystem{npu_root / 'include'}",
        str(source), "-o", str(out),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, f"{op.name}'s PrivateUse1 adapter does not compile against torch_npu's headers:\n{proc.stderr}"
    return out


def _dynamic_symbols(library: Path) -> set:
    proc = subprocess.run(["nm", "-D", "--defined-only", str(library)], capture_output=True, text=True, check=True)
    return {line.split()[-1].split("@")[0] for line in proc.stdout.splitlines() if line.strip()}


def undefined_symbols(npu_object: Path, npu_root: Path) -> Tuple[List[str], List[str]]:
    """(needed symbols no library exports, every symbol the object needs), demangled. The
    libraries: libtorch_npu, torch's, the C++ runtime and libascend_ops_common."""
    import pytest
    import torch

    if shutil.which("nm") is None:
        pytest.skip("nm (binutils) is not installed: the symbol check cannot run")
    torch_lib = Path(torch.__file__).parent / "lib"
    from ascend_ops.common import lib_dir

    libraries = [npu_root / "lib" / "libtorch_npu.so", *(torch_lib / f"lib{n}.so" for n in ("torch", "torch_cpu", "c10")),
                 lib_dir() / "libascend_ops_common.so"]  # libascend_ops_common: its C interface (aop_*)
    for name in ("libstdc++.so", "libgcc_s.so.1", "libc.so.6", "libm.so.6"):
        path = subprocess.run(["g++", f"-print-file-name={name}"], capture_output=True, text=True).stdout.strip()
        if os.path.isabs(path):
            libraries.append(Path(os.path.realpath(path)))
    exported = set().union(*(_dynamic_symbols(lib) for lib in libraries))
    mangled = subprocess.run(["nm", "-u", str(npu_object)], capture_output=True, text=True, check=True).stdout
    demangled = subprocess.run(["nm", "-uC", str(npu_object)], capture_output=True, text=True, check=True).stdout
    missing, needed = [], []
    for raw, pretty in zip(mangled.splitlines(), demangled.splitlines()):
        kind, symbol = raw.split()[-2:]
        name = pretty.split(None, 1)[1]
        if kind != "U" or symbol in ("_GLOBAL_OFFSET_TABLE_", "__dso_handle"):
            continue
        needed.append(name)
        if not name.startswith("aop::") and symbol.split("@")[0] not in exported:
            missing.append(name)
    return missing, needed
