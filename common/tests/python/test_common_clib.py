"""ascend_ops.common's face of libascend_ops_common (_clib, over the pybind11 module _runtime):
versions, caches, pools, platforms, threads, asynchronous errors, loading."""

from __future__ import annotations

import ctypes
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import ascend_ops.common as common
from ascend_ops.common import _clib
from ascend_ops.common.errors import AbiMismatch, CommonLibraryError

HEADERS = Path(__file__).resolve().parents[2] / "include" / "ascend_ops"


def _header_define(name: str) -> str:
    text = (HEADERS / "version.h").read_text()
    match = re.search(rf"#define {name} (\S+)", text)
    assert match, f"{name} not in version.h"
    return match.group(1).strip('"')


# --- the ABI this package speaks matches the headers ---------------------------------------
def test_declared_abi_matches_version_header():
    assert _clib.ABI == int(_header_define("AOP_COMMON_ABI"))


# --- version -------------------------------------------------------------------------------
def test_version_and_abi(common_lib):
    assert common.common_version() == _header_define("AOP_COMMON_VERSION_STRING")
    assert common.common_abi() == _clib.ABI
    assert common.__version__  # metadata or, in a checkout, the library's version
    # the binding was compiled against the same headers
    assert (common_lib.COMMON_ABI, common_lib.COMMON_VERSION) == (_clib.ABI, common.common_version())


def _mapped_copies():
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "libascend_ops_common" in line}
    return sorted({os.path.realpath(p) for p in paths})


def test_library_is_loaded_once_and_global(common_lib):
    assert common.library() is common.library() is common_lib
    assert common_lib.__name__ == "ascend_ops.common._runtime"
    # RTLD_GLOBAL: the symbols are visible in the process-wide namespace, where an op's
    # extension module that links the library finds them.
    everything = ctypes.CDLL(None)
    assert everything.aop_common_abi is not None
    assert _clib.library_file() is not None and _clib.library_file().is_file()
    # the binding calls the very file _clib loaded, and no other copy is mapped
    assert Path(common_lib.library_file()).resolve() == _clib.library_file().resolve()
    assert _mapped_copies() == [str(_clib.library_file().resolve())]


# --- caches --------------------------------------------------------------------------------
def test_cache_registry_lists_tiling_and_operator_first(common_lib):
    stats = common.cache_stats()
    assert [s["name"] for s in stats[:2]] == ["tiling", "operator"]
    for s in stats:
        assert set(s) == {"name", "capacity", "size", "hits", "misses", "inserts", "evictions"}
        assert s["size"] <= s["capacity"]


def _stats(name):
    return next(s for s in common.cache_stats() if s["name"] == name)


def test_set_cache_capacity_round_trip(common_lib):
    before = _stats("operator")["capacity"]
    try:
        common.set_cache_capacity("operator", 7)
        assert _stats("operator")["capacity"] == 7
        common.set_cache_capacity("operator", before + 1)
        assert _stats("operator")["capacity"] == before + 1
    finally:
        common.set_cache_capacity("operator", before)
    assert _stats("operator")["capacity"] == before


@pytest.mark.parametrize("which, n, exc", [
    ("bogus", 4, ValueError),
    ("tiling", -1, ValueError),
    ("tiling", 2.5, ValueError),
    ("tiling", True, ValueError),
])
def test_set_cache_capacity_rejects(common_lib, which, n, exc):
    with pytest.raises(exc, match="cache|n should be"):
        common.set_cache_capacity(which, n)


def test_set_cache_capacity_beyond_uint64(common_lib):
    with pytest.raises(ValueError, match="below 2\\*\\*64"):
        common.set_cache_capacity("tiling", 2**64)


def test_cache_counters_through_the_c_interface(common_lib):
    # a cache created through the C interface, as an op with private needs would
    cache = common_lib.Cache.create("pytest-counters", 2)
    try:
        assert "pytest-counters" in [s["name"] for s in common.cache_stats()]
        assert cache.get(b"a") is None                      # miss
        cache.put(b"a", b"alpha")
        cache.put(b"b", b"beta")
        assert cache.get(b"a") == b"alpha"                  # hit; "b" is now least recent
        cache.put(b"c", b"gamma")                           # evicts "b"
        assert cache.get(b"b") is None                      # miss
        assert cache.get(b"c") == b"gamma"                  # hit
        s = cache.stats()
        assert (s["hits"], s["misses"], s["inserts"], s["evictions"], s["size"]) == (2, 2, 3, 1, 2)
        # capacity through the C call, then the registry row agrees
        cache.set_capacity(1)
        row = next(r for r in common.cache_stats() if r["name"] == "pytest-counters")
        assert (row["capacity"], row["size"], row["evictions"]) == (1, 1, 2)
        cache.reset_stats()
        assert cache.stats()["hits"] == 0 and cache.stats()["size"] == 1
    finally:
        cache.close()
    assert "pytest-counters" not in [s["name"] for s in common.cache_stats()]
    with pytest.raises(ValueError, match="closed"):
        cache.get(b"a")


def test_clear_caches_keeps_counters_unless_asked(common_lib):
    common_lib.tiling_cache().put(b"pytest-key", b"v")
    assert _stats("tiling")["size"] >= 1
    inserts = _stats("tiling")["inserts"]
    common.clear_caches("tiling")
    assert _stats("tiling")["size"] == 0 and _stats("tiling")["inserts"] == inserts
    common.clear_caches(reset_stats=True)
    assert all(_stats(n)["inserts"] == 0 and _stats(n)["size"] == 0 for n in ("tiling", "operator"))


# --- workspace pool ------------------------------------------------------------------------
def test_pool_stats_and_trim(common_lib):
    pools = common.pool_stats()
    assert pools[0]["name"] == "default" and pools[0]["limit_bytes"] > 0
    block = common_lib.acquire_default_block(1000)
    assert block.size >= 1000
    assert block.address % 512 == 0                         # AOP_POOL_ALIGNMENT
    busy = common.pool_stats()[0]
    assert busy["live_blocks"] >= 1 and busy["in_use_bytes"] >= 1000
    block.release()
    assert common.pool_stats()[0]["cached_bytes"] >= 1000
    common.trim_default_pool()
    assert common.pool_stats()[0]["cached_bytes"] == 0
    with pytest.raises(ValueError, match="released"):
        block.size


def test_pool_bound_is_a_memory_error(common_lib):
    limit = common.pool_stats()[0]["limit_bytes"]
    with pytest.raises(MemoryError, match="workspace pool 'default'"):
        common_lib.acquire_default_block(limit + 1)


# --- dtypes --------------------------------------------------------------------------------
def test_dtype_table_matches_the_binding(common_lib):
    from ascend_ops.common import dtypes

    for name, names in dtypes.dtype_names.items():
        assert common_lib.dtype_name(names.aop) == name
        assert common_lib.dtype_size(names.aop) == names.itemsize
    assert (common_lib.dtype_name(999), common_lib.dtype_size(999)) == ("unknown", 0)


# --- platforms -----------------------------------------------------------------------------
def test_platform_presets(common_lib):
    presets = {p.soc: p for p in common.platform_presets()}
    b2, b4 = presets["Ascend910B2"], presets["Ascend910B4"]
    assert (b2.aiv_cores, b2.ub_bytes, b2.family) == (48, 196608, "Atlas A2")
    assert (b4.aiv_cores, b4.ub_bytes) == (40, 196608)
    assert not any(p.is_real_device for p in presets.values())
    assert common.platform_preset("ascend910b4") == b4        # case-insensitive


def test_unknown_platform_lists_known_names(common_lib):
    with pytest.raises(ValueError, match="Ascend910B2"):
        common.platform_preset("Ascend999")
    with pytest.raises(TypeError):
        common.platform_preset(910)


def test_current_platform_default_and_env(common_lib, child_env):
    code = "import ascend_ops.common as c; print(c.current_platform().soc)"
    default = subprocess.run([sys.executable, "-c", code], env=child_env(ASCEND_OPS_PLATFORM=""),
                             capture_output=True, text=True, check=True)
    assert default.stdout.strip() == "Ascend910B2"
    chosen = subprocess.run([sys.executable, "-c", code],
                            env=child_env(ASCEND_OPS_PLATFORM="Ascend910B4"),
                            capture_output=True, text=True, check=True)
    assert chosen.stdout.strip() == "Ascend910B4"


def test_cache_capacity_from_environment(common_lib, child_env):
    code = "import json, ascend_ops.common as c; print(json.dumps(c.cache_stats()[:2]))"
    out = subprocess.run([sys.executable, "-c", code],
                         env=child_env(ASCEND_OPS_TILING_CACHE_SIZE="7",
                                       ASCEND_OPS_OPERATOR_CACHE_SIZE="3"),
                         capture_output=True, text=True, check=True)
    assert [s["capacity"] for s in json.loads(out.stdout)] == [7, 3]


# --- loading failures ----------------------------------------------------------------------
def test_missing_override_is_an_error(fresh_clib, monkeypatch, tmp_path):
    monkeypatch.setenv("ASCEND_OPS_COMMON_LIB", str(tmp_path / "nope.so"))
    with pytest.raises(CommonLibraryError, match="ASCEND_OPS_COMMON_LIB"):
        _clib.library()


def test_library_without_the_interface_is_rejected(fresh_clib, monkeypatch):
    import _ctypes  # any shared object without the aop_* symbols

    if not getattr(_ctypes, "__file__", None):
        pytest.skip("_ctypes is built into this Python: no stand-in shared object")
    monkeypatch.setenv("ASCEND_OPS_COMMON_LIB", _ctypes.__file__)
    with pytest.raises(CommonLibraryError, match="does not export aop_"):
        _clib.library()


def test_binding_load_error_names_the_missing_symbol(tmp_path):
    lib = tmp_path / "libascend_ops_common.so"
    exc = ImportError(f"{lib}: undefined symbol: aop_pool_reset_peak")
    error = _clib._binding_load_error(lib, exc)
    assert isinstance(error, CommonLibraryError)
    assert f"{lib} does not export aop_pool_reset_peak" in str(error)
    other = _clib._binding_load_error(lib, ImportError("wrong ELF class: ELFCLASS32"))
    assert "ELFCLASS32" in str(other) and "ascend_ops.common._runtime" in str(other)


def test_binding_must_speak_the_abi_and_call_the_loaded_copy(common_lib, tmp_path):
    loaded = _clib.library_file()
    _clib._check_binding(common_lib, loaded)  # the real one passes
    with pytest.raises(AbiMismatch, match=f"built for C ABI {_clib.ABI + 1}"):
        _clib._check_binding(SimpleNamespace(COMMON_ABI=_clib.ABI + 1,
                                             library_file=lambda: str(loaded)), loaded)
    elsewhere = tmp_path / "libascend_ops_common.so"
    elsewhere.write_bytes(b"")
    with pytest.raises(CommonLibraryError, match="two copies"):
        _clib._check_binding(SimpleNamespace(COMMON_ABI=_clib.ABI,
                                             library_file=lambda: str(elsewhere)), loaded)


_REPORT_BINDING = """
import ascend_ops.common as c, ascend_ops.common._clib as clib
lib = c.library()
print(clib.library_file()); print(lib.library_file()); print(c.cache_stats()[0]["name"])
with open("/proc/self/maps") as maps:
    print(len({line.split()[-1] for line in maps if "libascend_ops_common" in line}))
"""


def test_override_is_the_copy_the_binding_calls(common_lib, child_env, tmp_path):
    copy = tmp_path / "elsewhere" / "libascend_ops_common.so"
    copy.parent.mkdir()
    copy.write_bytes(_clib.library_file().read_bytes())
    out = subprocess.run([sys.executable, "-c", _REPORT_BINDING],
                         env=child_env(ASCEND_OPS_COMMON_LIB=str(copy)),
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(copy), str(copy), "tiling", "1"]


def test_binding_imported_before_the_override_is_refused(common_lib, child_env, tmp_path):
    copy = tmp_path / "libascend_ops_common.so"
    copy.write_bytes(_clib.library_file().read_bytes())
    code = "import ascend_ops.common._runtime, ascend_ops.common as c; c.library()"
    done = subprocess.run([sys.executable, "-c", code],
                          env=child_env(ASCEND_OPS_COMMON_LIB=str(copy)),
                          capture_output=True, text=True)
    assert done.returncode != 0
    assert "CommonLibraryError" in done.stderr and "two copies" in done.stderr


def test_python_and_library_abi_must_match(common_lib, fresh_clib, monkeypatch):
    monkeypatch.setattr(_clib, "ABI", _clib.ABI + 1)
    with pytest.raises(AbiMismatch) as info:
        _clib.library()
    message = str(info.value)
    assert f"C ABI {_clib.ABI - 1}" in message and f"C ABI {_clib.ABI}" in message
    assert isinstance(info.value, ImportError)


def test_check_errors_raises_the_first_posted_error_once(common_lib):
    lib = common_lib
    common.check_errors()  # nothing pending
    assert lib.post_async_error(3, "my_op: slot_mapping[2] = 77 is out of range") is True
    assert lib.post_async_error(1, "a later error") is False  # the first one wins
    assert lib.async_error_pending() is True
    with pytest.raises(IndexError, match=r"slot_mapping\[2\] = 77"):
        common.check_errors(synchronize=False)
    assert lib.async_error_pending() is False
    common.check_errors()  # raising cleared it


@pytest.mark.parametrize("status, exc", [
    (1, ValueError), (2, TypeError), (3, IndexError), (4, RuntimeError), (5, MemoryError),
    (77, RuntimeError),
])
def test_a_status_raises_its_exception(common_lib, status, exc):
    common_lib.post_async_error(status, f"status {status} posted")
    with pytest.raises(exc) as info:
        common.check_errors()
    assert type(info.value) is exc and str(info.value) == f"status {status} posted"


def test_error_without_message_names_the_call(common_lib):
    common_lib.post_async_error(3, "")
    with pytest.raises(IndexError, match=r"^check_errors\(\) failed with status 3$"):
        common.check_errors()


def test_a_message_cut_inside_a_character_is_still_text(common_lib):
    # 2001 bytes: the library keeps 1020 and appends "...", cutting the 511th "é" in two
    common_lib.post_async_error(1, "x" + "é" * 1000)
    with pytest.raises(ValueError) as info:
        common.check_errors()
    assert str(info.value) == "x" + "é" * 509 + "\ufffd..."


def test_set_num_threads_checks_its_argument(common_lib):
    with pytest.raises(TypeError, match="n should be an int but is float"):
        common.set_num_threads(2.0)
    with pytest.raises(TypeError, match="but is bool"):
        common.set_num_threads(True)
    with pytest.raises(ValueError, match="fit in int32"):
        common.set_num_threads(2**31)
    try:
        common.set_num_threads(3)
        assert common.num_threads() == 3
    finally:
        common.set_num_threads(0)
