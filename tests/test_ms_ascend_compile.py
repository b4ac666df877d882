"""The MindSpore Ascend adapters compile against the mindspore wheel and link against its libraries.

No NPU and no CANN here. The mindspore 2.10 wheel ships the headers of its Ascend plugin and
the plugin's libraries (``lib/plugin/libmindspore_ascend.so.2``, ``lib/plugin/ascend/*``), so:

- every installed op's (``ascend_ops.ops`` entry points) ``_ms`` module, as CMake generates it
  (``common/cmake/ms_module.cpp.in`` over the op's ``op.h``), is compiled with ``AOP_MS_ASCEND``:
  its PyNative entry (``ascend_ops/mindspore_pynative.hpp``) has an NPU branch
  (``ascend_ops/mindspore_npu.hpp``, run_npu on MindSpore's current stream); and so are its
  graph-mode kernels (``ms_graph_npu.cpp.in``: the KernelMod of ``CustomOpBuilder(op_def=...)``,
  ``ascend_ops/mindspore_graph_npu.hpp``);
- link check: every symbol the objects need is exported by the wheel's libraries, by common or
  the op's host code, by the C/C++ runtime or by the Python interpreter; the only one left is
  ``run_npu`` (common's npu::run_kernel over op.h, built where CANN is found), and it must be needed.
- the op definition yaml (generated from the description, ``ascend_ops.<op>._description``, by
  ``ascend_ops.common.codegen``) goes through MindSpore's own generator (``gen_custom_ops.py``, what
  ``CustomOpBuilder(op_def=...)`` runs): the in-place inputs are ``RW_WRITE`` with ``side_effect_mem``.

``CUSTOM_ASCEND_OP`` (CustomOpBuilder's Ascend flag) is not defined: with it ``ms_extension``
includes CANN's GE headers, which neither wheel ships; the adapters do not need those headers.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ascend_ops.common import codegen
from ascend_ops.common.registry import installed_ops
from ascend_ops.devkit.npu_compile_check import op_source

ROOT = Path(__file__).resolve().parent.parent
OPS = tuple(op.name for op in installed_ops())
# The Ascend adapter (AOP_MS_ASCEND) is built only for ops with an AscendC kernel (a cpu-only op,
# ascend_ops_add_op without kernel/, has none to compile).
OPS_WITH_KERNELS = tuple(op for op in OPS if op_source(ROOT, op).has_kernel)
TEMPLATES = ROOT / "common" / "cmake"
SOURCES = ("ms_module.cpp", "ms_graph_npu.cpp")  # the _ms module and its graph kernels, rendered
GRAPH_KERNEL = "ms_graph_npu.cpp"


def _description(op: str) -> dict:
    """The op's description as its build generated it (ascend_ops.<op>._description)."""
    return __import__(f"ascend_ops.{op}._description", fromlist=["_"]).DESCRIPTION


def _in_place(op: str) -> tuple:
    """The arguments the description says are written in place (RW_WRITE in the yaml)."""
    return tuple(p["name"] for p in _description(op)["params"] if p["written"])


def _render(op: str, source: str, out: Path) -> Path:
    """A template of common/cmake rendered for `op` as ascend_ops_add_op() does."""
    path = out / f"{op}_{source}"
    path.write_text(op_source(ROOT, op).render((TEMPLATES / f"{source}.in").read_text()))
    return path


def _yaml_dir(op: str, out: Path) -> Path:
    """The op definition yaml, generated from the description as the build does."""
    path = out / "ms_ascend"
    path.mkdir(parents=True, exist_ok=True)
    (path / f"{op}_op.yaml").write_text(codegen.ms_yaml(_description(op), op))
    return path
# Resolved at run time by the interpreter or the C/C++ runtime, not by a library we link.
RUNTIME_PREFIXES = ("Py", "_Py", "std::", "operator new", "operator delete", "__cxa", "__gxx", "_Unwind",
                    "typeinfo for std::", "typeinfo for __cxxabiv1", "vtable for std::", "vtable for __cxxabiv1",
                    "VTT for std::", "__dynamic_cast", "__stack_chk", "__assert_fail", "__dso_handle",
                    "__libc_single_threaded", "__tls_get_addr", "_GLOBAL_OFFSET_TABLE_")
BUILTIN_TYPEINFO = {f"typeinfo for {t}" for t in ("bool", "char", "int", "long", "unsigned int", "unsigned long",
                                                  "float", "double", "char const*", "void*")}


def _mindspore_root() -> Path:
    spec = __import__("importlib.util").util.find_spec("mindspore")
    if spec is None or spec.origin is None:
        pytest.skip("mindspore is not installed")
    return Path(spec.origin).parent


@pytest.fixture(scope="module")
def ms_root() -> Path:
    if shutil.which("g++") is None or shutil.which("nm") is None:
        pytest.skip("g++ and nm (binutils) are needed for the compile and link check")
    root = _mindspore_root()
    if not (root / "lib" / "plugin" / "libmindspore_ascend.so.2").is_file():
        pytest.skip(f"{root} has no Ascend plugin (lib/plugin/libmindspore_ascend.so.2)")
    return root


def _includes(ms: Path) -> list:
    inc = ms / "include"
    inner = inc / "mindspore"
    dirs = [inc / "third_party", inc / "third_party" / "include", ms, inc, inc / "third_party" / "robin_hood_hashing",
            inc / "third_party" / "securec" / "include", inner / "include", inner / "core" / "include",
            inner / "core" / "mindrt" / "include", inner / "core" / "mindrt", inner / "ops", inner / "ops" / "include",
            inner / "ops" / "kernel" / "include", inner / "ccsrc", inner / "ccsrc" / "include",
            Path(sysconfig.get_paths()["include"])]
    return [f"-isystem{d}" for d in dirs if d.is_dir()]


@pytest.fixture(scope="module")
def objects(ms_root, tmp_path_factory) -> dict:
    """Every Ascend adapter source compiled once: {(op, source): object}."""
    out = tmp_path_factory.mktemp("ms_ascend")
    jobs = [(op, source) for op in OPS_WITH_KERNELS for source in SOURCES]

    def build(job):
        op, source = job
        src = _render(op, source, out)
        obj = out / f"{op}_{Path(source).stem}.o"
        cmd = ["g++", "-std=c++17", "-O0", "-fPIC", "-fvisibility=hidden", "-Wall", "-Wextra", "-Werror",
               "-Wno-missing-field-initializers", "-DAOP_MS_ASCEND=1", "-D_GLIBCXX_USE_CXX11_ABI=0",
               "-DENABLE_FAST_HASH_TABLE=1", "-DMS_EXTENSION_NAME=_ms", f'-DAOP_OP_NAME="{op}"',
               '-DAOP_OP_VERSION="0.0.0"', f"-I{op_source(ROOT, op).dir}", f"-I{ROOT / 'common' / 'include'}",
               *_includes(ms_root), "-c", str(src), "-o", str(obj)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        return job, obj, proc

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(build, jobs))
    built = {}
    for job, obj, proc in results:
        built[job] = (obj, proc)
    return built


def _exports(libraries) -> set:
    names = set()
    for lib in libraries:
        proc = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True)
        names.update(line.split()[-1] for line in proc.stdout.splitlines() if line.strip())
    return names


@pytest.fixture(scope="module")
def ms_exports(ms_root) -> set:
    lib = ms_root / "lib"
    return _exports([*lib.glob("*.so*"), *(lib / "plugin").glob("*.so*"), *(lib / "plugin" / "ascend").glob("*.so")])


def _strong_undefined(obj: Path) -> list:
    proc = subprocess.run(["nm", "-u", str(obj)], capture_output=True, text=True, check=True)
    return [line.split()[-1] for line in proc.stdout.splitlines() if line.split()[0] == "U"]


def _demangle(names) -> dict:
    names = list(names)
    proc = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
    return dict(zip(names, proc.stdout.splitlines()))


@pytest.mark.parametrize("job", [(op, source) for op in OPS_WITH_KERNELS for source in SOURCES], ids=lambda j: f"{j[0]}:{j[1]}")
def test_ascend_adapter_compiles_and_links(job, objects, ms_exports):
    obj, proc = objects[job]
    assert proc.returncode == 0, f"{job[0]}'s {job[1]} does not compile with AOP_MS_ASCEND:\n{proc.stderr[-4000:]}"
    undefined = set(_strong_undefined(obj))
    from_mindspore = _demangle(undefined & ms_exports).values()
    assert any(m.startswith("mindspore::") for m in from_mindspore), "the check resolved no MindSpore symbol"
    names = _demangle(undefined - ms_exports)
    ours = {m for m in names.values() if m.startswith(("aop::", "aop_"))}
    missing = sorted(m for m in names.values() if m not in ours and not m.startswith(RUNTIME_PREFIXES)
                     and m not in BUILTIN_TYPEINFO and not m.isidentifier())  # plain C names: libc / libm
    assert not missing, f"not exported by the mindspore wheel's libraries: {missing}"
    if job[1] == GRAPH_KERNEL:
        # Resize declares the workspace the host computes from the tiling (no fixed block).
        assert any(m.startswith(f"aop::{job[0]}::") and "tiling(" in m for m in ours), sorted(ours)
    needs_npu = [m for m in ours if "::run_npu(" in m]
    assert needs_npu, f"{job} does not reach run_npu: {sorted(ours)}"
    assert all("NpuContext const&" in m for m in needs_npu), needs_npu
    # Everything else of ours is common's C interface or the op's host code.
    others = sorted(m for m in ours if "::run_npu(" not in m)
    allowed = ("aop_", f"aop::{job[0]}::", "aop::cxx_abi0::", "aop::Error", "aop::current_platform")
    assert all(m.startswith(allowed) for m in others), others


@pytest.mark.parametrize("op", OPS)
def test_op_definition_yaml_generates_an_in_place_primitive(op, ms_root, tmp_path):
    """MindSpore's own generator (what CustomOpBuilder(op_def=...) runs) accepts the yaml: the
    in-place inputs are RW_WRITE and the primitive has side_effect_mem (else the write is dropped)."""
    yaml_dir = _yaml_dir(op, tmp_path / "yaml")
    in_place = _in_place(op)
    gen = ms_root / "ops_generate" / "gen_custom_ops.py"
    # As common/cmake/AscendOpsOp.cmake runs it: the eager function lives in ascend_ops.<op>.ms.
    proc = subprocess.run([sys.executable, str(gen), "-m", f"ascend_ops.{op}.ms", "-i", str(yaml_dir), "-o",
                           str(tmp_path), "-d", ""], capture_output=True, text=True, cwd=gen.parent,
                          env={**os.environ, "PYTHONPATH": str(gen.parent)})
    assert proc.returncode == 0, proc.stderr
    prim = (tmp_path / "gen_ops_prim.py").read_text()
    for name in in_place:
        assert f"sig.make_sig('{name}', sig.sig_rw.RW_WRITE)" in prim, name
    assert prim.count("sig.sig_rw.RW_WRITE") == len(in_place)
    assert ('add_prim_attr("side_effect_mem", True)' in prim) == bool(in_place)
    assert f"(ascend_ops.{op}.ms.{op}_npu)" in prim  # ms.py's eager function, as the primitive's op_func
    op_def = (tmp_path / "gen_custom_ops_def.cc").read_text()
    assert f"gCustom_{op}_npuFuncImpl" in op_def  # what MS_CUSTOM_OPS_REGISTER({op}_npu, ...) defines
    kernel = _render(op, GRAPH_KERNEL, tmp_path).read_text()
    assert f"MS_CUSTOM_OPS_REGISTER({op}_npu," in kernel


@pytest.mark.parametrize("op", OPS)
def test_generated_op_definition_compiles(op, ms_root, tmp_path):
    """The OpDef CMake generates from the yaml and compiles into _ms compiles with the wheel's headers."""
    gen = ms_root / "ops_generate" / "gen_custom_ops.py"
    subprocess.run([sys.executable, str(gen), "-m", f"ascend_ops.{op}.ms", "-i",
                    str(_yaml_dir(op, tmp_path / "yaml")), "-o", str(tmp_path), "-d", ""], check=True,
                   capture_output=True, cwd=gen.parent, env={**os.environ, "PYTHONPATH": str(gen.parent)})
    cmd = ["g++", "-std=c++17", "-O0", "-fPIC", "-D_GLIBCXX_USE_CXX11_ABI=0", "-DENABLE_FAST_HASH_TABLE=1",
           *_includes(ms_root), "-c", str(tmp_path / "gen_custom_ops_def.cc"), "-o", str(tmp_path / "def.o")]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    # The OpDef needs the FuncImpl MS_CUSTOM_OPS_REGISTER defines in the op's generated graph kernel.
    assert f"gCustom_{op}_npuFuncImpl" in "".join(_strong_undefined(tmp_path / "def.o"))
