"""The mixed-ABI proof: modules built with ``_GLIBCXX_USE_CXX11_ABI=0`` (as MindSpore's are)
and ``=1`` (as PyTorch's are) share one ``libascend_ops_common`` in one process.

``common/tests/abi`` is a standalone CMake project that finds the installed runtime with
``find_package(AscendOpsCommon CONFIG)`` and builds one source twice, ``abi_probe_0.so`` and
``abi_probe_1.so``. Each exercises the library through the header-only C++ wrappers with
``std::string``-built keys (tiling cache, operator cache object, workspace pool, platform
preset, an error caught as ``aop::Error``) and returns a ``key=value`` report.

Here both modules are built into a temporary directory, loaded with ctypes after
``ascend_ops.common`` has loaded the library, and run one after the other. The test checks
that the two builds really differ in ABI, that each works, and that they saw the same
process-wide caches and pool.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List

import pytest

import cmake_projects

import ascend_ops.common as common

ABI_PROJECT = Path(__file__).resolve().parents[1] / "abi"
REPORT_BYTES = 8192


@pytest.fixture(scope="module")
def probes(common_lib, tmp_path_factory: pytest.TempPathFactory) -> Dict[int, Path]:
    """Configure and build common/tests/abi; returns {abi: module path}."""
    build = tmp_path_factory.mktemp("abi-probe-build")
    # The package config also looks for frameworks; the probes need none of them.
    cmake_projects.build(ABI_PROJECT, build, "the mixed-ABI proof",
                         ["-DAOP_TORCH_ROOT=", "-DAOP_TORCH_NPU_ROOT=", "-DAOP_MINDSPORE_ROOT=", "-DAOP_CANN_ROOT="])
    return {abi: build / f"abi_probe_{abi}.so" for abi in (0, 1)}


def _load(path: Path) -> ctypes.CDLL:
    # RTLD_GLOBAL is the harsh case: every symbol the two modules export is visible to the
    # other, so any shared name between the ABI-0 and ABI-1 wrapper copies would interpose.
    module = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
    module.abi_probe_run.restype = ctypes.c_int
    module.abi_probe_run.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return module


def _run_probe(module: ctypes.CDLL) -> Dict[str, str]:
    buf = ctypes.create_string_buffer(REPORT_BYTES)
    rc = module.abi_probe_run(buf, REPORT_BYTES)
    text = buf.value.decode()
    assert rc == 0, f"abi_probe_run failed:\n{text}"
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def _caches() -> Dict[str, dict]:
    return {s["name"]: s for s in common.cache_stats()}


def _default_pool() -> dict:
    return next(s for s in common.pool_stats() if s["name"] == "default")


def _dynamic_symbols(path: Path, which: str) -> List[str]:
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("binutils nm is not installed; it reads the modules' dynamic symbols")
    out = subprocess.run([nm, "-D", which, str(path)], capture_output=True, text=True, check=True)
    return [line.split()[-1].split("@")[0] for line in out.stdout.splitlines() if line.strip()]


def _mapped_copies() -> List[str]:
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "libascend_ops_common" in line}
    return sorted({os.path.realpath(p) for p in paths})


def test_the_two_builds_really_differ_in_abi(probes: Dict[int, Path]) -> None:
    needed = {abi: _dynamic_symbols(path, "--undefined-only") for abi, path in probes.items()}
    # ABI 1 calls libstdc++'s std::__cxx11::basic_string; ABI 0 the old copy-on-write string.
    assert any("__cxx11" in s for s in needed[1])
    assert not any("__cxx11" in s for s in needed[0])
    old_string = re.compile(r"^_ZN?K?Ss|RKSs")
    assert any(old_string.search(s) for s in needed[0])
    assert not any(old_string.search(s) for s in needed[1])
    # Each module's copy of the wrappers lives in its own inline namespace, so no wrapper
    # symbol is shared between the two (they are exported here on purpose: default visibility).
    defined = {abi: {s for s in _dynamic_symbols(path, "--defined-only") if s.startswith("_ZN3aop")}
               for abi, path in probes.items()}
    assert any(s.startswith("_ZN3aop8cxx_abi0") for s in defined[0])
    assert any(s.startswith("_ZN3aop8cxx_abi1") for s in defined[1])
    assert defined[0].isdisjoint(defined[1])


def test_both_abis_share_one_runtime_in_one_process(probes: Dict[int, Path]) -> None:
    common.library()  # ascend_ops.common loads the runtime first, as the op loader does
    assert len(_mapped_copies()) == 1
    tiling_capacity = _caches()["tiling"]["capacity"]
    if tiling_capacity < 64:  # another test may have shrunk it; the probes need room
        common.set_cache_capacity("tiling", 1024)
    try:
        before, pool_before = _caches(), _default_pool()
        abi0, abi1 = _load(probes[0]), _load(probes[1])
        report0 = _run_probe(abi0)
        report1 = _run_probe(abi1)
        after, pool_after = _caches(), _default_pool()
        assert len(_mapped_copies()) == 1, f"a second runtime copy was loaded: {_mapped_copies()}"

        # Each ran in its own ABI, through the C++ wrappers, with everything working.
        assert (report0["abi"], report1["abi"]) == ("0", "1")
        assert (report0["sizeof_string"], report1["sizeof_string"]) == ("8", "32")
        assert "cxx_abi0" in report0["wrapper_type"] and "cxx_abi1" in report1["wrapper_type"]
        for report in (report0, report1):
            assert report["platform"] == "Ascend910B4/40"
            assert report["error"] == "caught"
            assert report["pool_bound"] == "caught"
            assert report["block"] == "3072"
            assert report["default_block"] == "4096"
        assert report0["state"] == "state built with abi 0"
        assert report1["state"] == "state built with abi 1"

        # One process-wide tiling cache: the ABI-1 module read the struct the ABI-0 one stored.
        assert report0["key_hash"] == report1["key_hash"]
        first_run = report0["tiling_computed"] == "1"
        if first_run:
            assert report1["tiling_computed"] == "0"
            assert report1["tiling_built_by_abi"] == "0"
            assert after["tiling"]["inserts"] - before["tiling"]["inserts"] == 1
            assert after["tiling"]["misses"] - before["tiling"]["misses"] == 1
        assert after["tiling"]["hits"] - before["tiling"]["hits"] >= 1
        # One operator cache too: the ABI-1 module found the ABI-0 object and refused it.
        assert report1["cross_abi"] == "refused"
        assert report0["cross_abi"] in ("absent", "refused")
        # One default pool: both modules' blocks were counted there and given back.
        assert pool_after["acquires"] - pool_before["acquires"] == 2
        assert pool_after["live_blocks"] == pool_before["live_blocks"]
        # The probes' private pools were destroyed on the way out.
        assert not any(s["name"].startswith("abi_probe_pool") for s in common.pool_stats())

        # A second round: everything is now a hit, whichever ABI asks.
        again0 = _run_probe(abi0)
        assert again0["tiling_computed"] == "0"
        assert again0["cross_abi"] == "refused"
    finally:
        if tiling_capacity < 64:
            common.set_cache_capacity("tiling", tiling_capacity)
