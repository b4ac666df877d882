"""The MindSpore Ascend adapters compile against the mindspore wheel and link against its libraries.

No NPU and no CANN here. The mindspore 2.10 wheel ships the headers of its Ascend plugin and
the plugin's libraries (``lib/plugin/libmindspore_ascend.so.2``, ``lib/plugin/ascend/*``), so:

- every op's ``mindspore/module.cpp`` is compiled with ``AOP_MS_ASCEND``: its PyNative entry,
  common's ``ascend_ops/mindspore_pynative.hpp`` over the op's ``op.h``, has an NPU branch
  (``ascend_ops/mindspore_npu.hpp``, run_npu on MindSpore's current stream), and
  the graph-mode kernels ``mindspore/ascend/graph_npu.cpp`` (the KernelMod of
  ``CustomOpBuilder(op_def=...)``, ``ascend_ops/mindspore_graph_npu.hpp``);
- link check: every symbol the objects need is exported by the wheel's libraries, by common or
  the op's host code, by the C/C++ runtime or by the Python interpreter; the only one left is
  ``run_npu`` (common's npu::run_kernel over op.h, built where CANN is found), and it must be needed.
- the op definition yaml goes through MindSpore's own generator (``gen_custom_ops.py``, what
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

ROOT = Path(__file__).resolve().parent.parent
OPS = ("reshape_and_cache", "adv_step_flash", "lightning_indexer")
GRAPH_KERNELS = {op: "mindspore/ascend/graph_npu.cpp" for op in OPS}
# The inputs each op's yaml marks RW_WRITE (written in place; lightning_indexer has real outputs).
IN_PLACE = {"reshape_and_cache": ("key_cache", "value_cache"),
            "adv_step_flash": ("input_tokens", "input_positions", "seq_lens", "slot_mapping"),
            "lightning_indexer": ()}
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
    jobs = [(op, "mindspore/module.cpp") for op in OPS] + list(GRAPH_KERNELS.items())

    def build(job):
        op, source = job
        obj = out / f"{op}_{Path(source).stem}.o"
        cmd = ["g++", "-std=c++17", "-O0", "-fPIC", "-fvisibility=hidden", "-Wall", "-Wextra", "-Werror",
               "-Wno-missing-field-initializers", "-DAOP_MS_ASCEND=1", "-D_GLIBCXX_USE_CXX11_ABI=0",
               "-DENABLE_FAST_HASH_TABLE=1", "-DMS_EXTENSION_NAME=_ms", f'-DAOP_OP_NAME="{op}"',
               '-DAOP_OP_VERSION="0.0.0"', f"-I{ROOT / 'ops' / op}", f"-I{ROOT / 'common' / 'include'}",
               *_includes(ms_root), "-c", str(ROOT / "ops" / op / source), "-o", str(obj)]
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


@pytest.mark.parametrize("job", [(op, "mindspore/module.cpp") for op in OPS] + list(GRAPH_KERNELS.items()),
                         ids=lambda j: f"{j[0]}:{Path(j[1]).name}")
def test_ascend_adapter_compiles_and_links(job, objects, ms_exports):
    obj, proc = objects[job]
    assert proc.returncode == 0, f"ops/{job[0]}/{job[1]} does not compile with AOP_MS_ASCEND:\n{proc.stderr[-4000:]}"
    undefined = set(_strong_undefined(obj))
    from_mindspore = _demangle(undefined & ms_exports).values()
    assert any(m.startswith("mindspore::") for m in from_mindspore), "the check resolved no MindSpore symbol"
    names = _demangle(undefined - ms_exports)
    ours = {m for m in names.values() if m.startswith(("aop::", "aop_"))}
    missing = sorted(m for m in names.values() if m not in ours and not m.startswith(RUNTIME_PREFIXES)
                     and m not in BUILTIN_TYPEINFO and not m.isidentifier())  # plain C names: libc / libm
    assert not missing, f"not exported by the mindspore wheel's libraries: {missing}"
    if job in GRAPH_KERNELS.items():
        # Resize declares the workspace the host computes from the tiling (no fixed block).
        assert any(f"aop::{job[0]}::npu_workspace_bytes(" in m for m in ours), sorted(ours)
    needs_npu = [m for m in ours if "::run_npu(" in m]
    assert needs_npu, f"{job} does not reach run_npu: {sorted(ours)}"
    assert all("NpuContext const&" in m for m in needs_npu), needs_npu
    # Everything else of ours is common's C interface or the op's host code.
    others = sorted(m for m in ours if "::run_npu(" not in m)
    allowed = ("aop_", f"aop::{job[0]}::", "aop::cxx_abi0::", "aop::Error", "aop::current_platform")
    assert all(m.startswith(allowed) for m in others), others


@pytest.mark.parametrize("op", sorted(IN_PLACE))
def test_op_definition_yaml_generates_an_in_place_primitive(op, ms_root, tmp_path):
    """MindSpore's own generator (what CustomOpBuilder(op_def=...) runs) accepts the yaml: the
    in-place inputs are RW_WRITE and the primitive has side_effect_mem (else the write is dropped)."""
    yaml_dir = ROOT / "ops" / op / "mindspore" / "ascend"
    gen = ms_root / "ops_generate" / "gen_custom_ops.py"
    # As common/cmake/AscendOpsOp.cmake runs it: the eager function lives in ascend_ops.<op>.ms.
    proc = subprocess.run([sys.executable, str(gen), "-m", f"ascend_ops.{op}.ms", "-i", str(yaml_dir), "-o",
                           str(tmp_path), "-d", ""], capture_output=True, text=True, cwd=gen.parent,
                          env={**os.environ, "PYTHONPATH": str(gen.parent)})
    assert proc.returncode == 0, proc.stderr
    prim = (tmp_path / "gen_ops_prim.py").read_text()
    for name in IN_PLACE[op]:
        assert f"sig.make_sig('{name}', sig.sig_rw.RW_WRITE)" in prim, name
    assert prim.count("sig.sig_rw.RW_WRITE") == len(IN_PLACE[op])
    assert ('add_prim_attr("side_effect_mem", True)' in prim) == bool(IN_PLACE[op])
    assert f"(ascend_ops.{op}.ms.{op}_npu)" in prim  # ms.py's eager function, as the primitive's op_func
    op_def = (tmp_path / "gen_custom_ops_def.cc").read_text()
    assert f"gCustom_{op}_npuFuncImpl" in op_def  # what MS_CUSTOM_OPS_REGISTER({op}_npu, ...) defines
    kernel = (ROOT / "ops" / op / GRAPH_KERNELS[op]).read_text()
    assert f"MS_CUSTOM_OPS_REGISTER({op}_npu," in kernel


@pytest.mark.parametrize("op", OPS)
def test_generated_op_definition_compiles(op, ms_root, tmp_path):
    """The OpDef CMake generates from the yaml and compiles into _ms compiles with the wheel's headers."""
    gen = ms_root / "ops_generate" / "gen_custom_ops.py"
    subprocess.run([sys.executable, str(gen), "-m", f"ascend_ops.{op}.ms", "-i",
                    str(ROOT / "ops" / op / "mindspore" / "ascend"), "-o", str(tmp_path), "-d", ""], check=True,
                   capture_output=True, cwd=gen.parent, env={**os.environ, "PYTHONPATH": str(gen.parent)})
    cmd = ["g++", "-std=c++17", "-O0", "-fPIC", "-D_GLIBCXX_USE_CXX11_ABI=0", "-DENABLE_FAST_HASH_TABLE=1",
           *_includes(ms_root), "-c", str(tmp_path / "gen_custom_ops_def.cc"), "-o", str(tmp_path / "def.o")]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    # The OpDef needs the FuncImpl MS_CUSTOM_OPS_REGISTER defines in the op's graph_npu.cpp.
    assert f"gCustom_{op}_npuFuncImpl" in "".join(_strong_undefined(tmp_path / "def.o"))
