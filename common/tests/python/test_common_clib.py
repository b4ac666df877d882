"""The ctypes binding of libascend_ops_common: versions, caches, pools, platforms, loading."""

from __future__ import annotations

import ctypes
import json
import re
import subprocess
import sys
from pathlib import Path

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


# --- the structs and the ABI this package declares match the headers -----------------------
def test_declared_abi_matches_version_header():
    assert _clib.ABI == int(_header_define("AOP_COMMON_ABI"))


@pytest.mark.parametrize("define, value", [
    ("AOP_NAME_BYTES", _clib._NAME_BYTES),
    ("AOP_PLATFORM_NAME_BYTES", _clib._PLATFORM_NAME_BYTES),
    ("AOP_ERROR_MESSAGE_BYTES", _clib._ERROR_MESSAGE_BYTES),
])
def test_struct_sizes_match_headers(define, value):
    text = "".join(p.read_text() for p in HEADERS.glob("*.h"))
    match = re.search(rf"#define {define} (\d+)", text)
    assert match and int(match.group(1)) == value


def test_every_declared_function_is_in_a_header():
    text = "".join(p.read_text() for p in HEADERS.glob("*.h"))
    declared = set(re.findall(r"\b(aop_\w+)\s*\(", text))
    missing = [name for name in _clib._SIGNATURES if name not in declared]
    assert not missing, f"declared in _clib but not in include/ascend_ops: {missing}"


# --- version -------------------------------------------------------------------------------
def test_version_and_abi(common_lib):
    assert common.common_version() == _header_define("AOP_COMMON_VERSION_STRING")
    assert common.common_abi() == _clib.ABI
    assert common.__version__  # metadata or, in a checkout, the library's version


def test_library_is_loaded_once_and_global(common_lib):
    assert common.library() is common.library() is common_lib
    # RTLD_GLOBAL: the symbols are visible in the process-wide namespace, where an op's
    # extension module that links the library finds them.
    everything = ctypes.CDLL(None)
    assert everything.aop_common_abi is not None
    assert _clib.library_file() is not None and _clib.library_file().is_file()


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


class _PrivateCache:
    """A cache created through the C interface, as an op with private needs would."""

    def __init__(self, lib, name, capacity):
        err = _clib.AopError()
        self.lib = lib
        self.handle = lib.aop_cache_create(name.encode(), capacity, ctypes.byref(err))
        assert self.handle, err.message

    def put(self, key: bytes, value: bytes) -> None:
        err = _clib.AopError()
        held = self.lib.aop_cache_put(self.handle, key, len(key), value, len(value), None,
                                      _clib.DELETER_FN(), ctypes.byref(err))
        assert held, err.message
        self.lib.aop_value_release(held)

    def get(self, key: bytes):
        held = self.lib.aop_cache_get(self.handle, key, len(key))
        if not held:
            return None
        size = ctypes.c_size_t()
        data = self.lib.aop_value_bytes(held, ctypes.byref(size))
        out = ctypes.string_at(data, size.value)
        self.lib.aop_value_release(held)
        return out

    def stats(self):
        s = _clib.AopCacheStats()
        self.lib.aop_cache_get_stats(self.handle, ctypes.byref(s))
        return _clib._cache_dict(s)


def test_cache_counters_through_the_c_interface(common_lib):
    cache = _PrivateCache(common_lib, "pytest-counters", 2)
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
        err = _clib.AopError()
        assert common_lib.aop_cache_set_capacity(cache.handle, 1, ctypes.byref(err)) == 0
        row = next(r for r in common.cache_stats() if r["name"] == "pytest-counters")
        assert (row["capacity"], row["size"], row["evictions"]) == (1, 1, 2)
        common_lib.aop_cache_reset_stats(cache.handle)
        assert cache.stats()["hits"] == 0 and cache.stats()["size"] == 1
    finally:
        common_lib.aop_cache_destroy(cache.handle)
    assert "pytest-counters" not in [s["name"] for s in common.cache_stats()]


def test_clear_caches_keeps_counters_unless_asked(common_lib):
    cache = common_lib.aop_tiling_cache()
    err = _clib.AopError()
    held = common_lib.aop_cache_put(cache, b"pytest-key", 10, b"v", 1, None, _clib.DELETER_FN(),
                                    ctypes.byref(err))
    assert held, err.message
    common_lib.aop_value_release(held)
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
    pool = common_lib.aop_default_pool()
    err = _clib.AopError()
    block = common_lib.aop_pool_acquire(pool, 1000, ctypes.byref(err))
    assert block, err.message
    assert common_lib.aop_block_size(block) >= 1000
    assert common_lib.aop_block_data(block) % 512 == 0      # AOP_POOL_ALIGNMENT
    busy = common.pool_stats()[0]
    assert busy["live_blocks"] >= 1 and busy["in_use_bytes"] >= 1000
    common_lib.aop_block_release(block)
    assert common.pool_stats()[0]["cached_bytes"] >= 1000
    common.trim_default_pool()
    assert common.pool_stats()[0]["cached_bytes"] == 0


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


def test_python_and_library_abi_must_match(common_lib, fresh_clib, monkeypatch):
    monkeypatch.setattr(_clib, "ABI", _clib.ABI + 1)
    with pytest.raises(AbiMismatch) as info:
        _clib.library()
    message = str(info.value)
    assert f"C ABI {_clib.ABI - 1}" in message and f"C ABI {_clib.ABI}" in message
    assert isinstance(info.value, ImportError)


def test_check_errors_raises_the_first_posted_error_once():
    lib = _clib.library()
    common.check_errors()  # nothing pending
    assert lib.aop_async_error_post(3, b"my_op: slot_mapping[2] = 77 is out of range") == 1
    assert lib.aop_async_error_post(1, b"a later error") == 0  # the first one wins
    assert lib.aop_async_error_pending() == 1
    with pytest.raises(IndexError, match=r"slot_mapping\[2\] = 77"):
        common.check_errors(synchronize=False)
    assert lib.aop_async_error_pending() == 0
    common.check_errors()  # raising cleared it
