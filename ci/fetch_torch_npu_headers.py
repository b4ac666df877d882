#!/usr/bin/env python3
"""Fetch the C++ headers (and optionally libtorch_npu.so) of a torch_npu wheel, never installing it.

The PyTorch NPU adapters (common's ``torch_npu_op.hpp``, generated per op) are built only where torch_npu and CANN
exist. Elsewhere they are kept honest by compiling them against the headers the torch_npu wheel
ships (``torch_npu/include``: torch_npu, op-plugin and the ACL headers it needs) and by checking
that the symbols they call are exported by ``libtorch_npu.so``. This script gets those files:

1. ``pip download torch_npu==<version> --no-deps --only-binary=:all:`` for a given Python and
   platform into ``<cache>/wheels`` (skipped when the wheel is already there). Never
   ``pip install``: torch_npu's entry point makes ``import torch`` fail without CANN.
2. Unzips only ``torch_npu/include/**`` (and with ``--with-lib`` ``torch_npu/lib/libtorch_npu.so``)
   into ``<cache>/torch_npu-<version>-<tag>/torch_npu``, the directory CMake's
   ``AOP_TORCH_NPU_ROOT`` and the compile check expect.

Prints that directory on the last line of stdout. Exit status: 0 on success, 3 when the wheel
could not be downloaded because the network is unreachable (callers may skip), 1 otherwise.

    python ci/fetch_torch_npu_headers.py                       # torch_npu 2.13.0, this Python
    python ci/fetch_torch_npu_headers.py --with-lib --cache build/torch_npu_wheel
"""
from __future__ import annotations

import argparse
import platform
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import List, Optional

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_VERSION = "2.13.0"
DEFAULT_CACHE = ROOT / "build" / "torch_npu_wheel"
EXIT_NETWORK = 3
INCLUDE_PREFIX = "torch_npu/include/"
LIB_MEMBER = "torch_npu/lib/libtorch_npu.so"
STAMP = ".complete"

# pip's messages when the index cannot be reached at all (as opposed to "no such version").
# torch_npu is on PyPI, so an index that lists no version of it at all was not reached.
_NETWORK_ERRORS = re.compile(
    r"\(from versions: none\)|NewConnectionError|Failed to establish a new connection|Temporary failure in name resolution"
    r"|Name or service not known|Network is unreachable|No route to host|ConnectTimeout"
    r"|Read timed out|ProxyError|Connection refused|Could not fetch URL|SSLError"
)


class FetchError(Exception):
    """The wheel could not be fetched or unpacked; ``network`` tells whether the cause is the network."""

    def __init__(self, message: str, network: bool = False) -> None:
        super().__init__(message)
        self.network = network


def default_platform() -> str:
    """The manylinux tag torch_npu wheels use for this machine (manylinux_2_28_<arch>)."""
    machine = platform.machine().lower()
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    return f"manylinux_2_28_{arch}"


def default_python_version() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def _find_wheel(wheels: Path, version: str, python_version: str, plat: str) -> Optional[Path]:
    tag = "cp" + python_version.replace(".", "")
    for candidate in sorted(wheels.glob(f"torch_npu-{version}-{tag}-{tag}-*.whl")):
        if plat in candidate.name:
            return candidate
    return None


def download(version: str, python_version: str, plat: str, wheels: Path, pip_python: str) -> Path:
    """Return the cached wheel, downloading it with pip when it is not cached yet."""
    cached = _find_wheel(wheels, version, python_version, plat)
    if cached is not None:
        return cached
    wheels.mkdir(parents=True, exist_ok=True)
    cmd = [
        pip_python, "-m", "pip", "download", f"torch_npu=={version}", "--no-deps",
        "--only-binary=:all:", "--python-version", python_version, "--platform", plat,
        "--disable-pip-version-check", "--dest", str(wheels),
    ]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        output = proc.stdout.strip()
        raise FetchError(
            f"`{' '.join(cmd)}` failed with status {proc.returncode}:\n{output}",
            network=bool(_NETWORK_ERRORS.search(output)),
        )
    wheel = _find_wheel(wheels, version, python_version, plat)
    if wheel is None:
        raise FetchError(f"pip reported success but no torch_npu {version} wheel for {plat} is in {wheels}")
    return wheel


def unpack(wheel: Path, dest: Path, with_lib: bool) -> Path:
    """Extract the headers (and the library) of `wheel` under `dest`; return dest/torch_npu."""
    root = dest / "torch_npu"
    stamp = dest / STAMP
    wanted_lib = with_lib and not (root / "lib" / "libtorch_npu.so").is_file()
    if stamp.is_file() and not wanted_lib:
        return root
    with zipfile.ZipFile(wheel) as zf:
        members: List[zipfile.ZipInfo] = [
            info for info in zf.infolist()
            if (info.filename.startswith(INCLUDE_PREFIX) and not info.is_dir())
            or (with_lib and info.filename == LIB_MEMBER)
        ]
        if not any(m.filename.startswith(INCLUDE_PREFIX) for m in members):
            raise FetchError(f"{wheel.name} has no {INCLUDE_PREFIX} directory")
        if with_lib and not any(m.filename == LIB_MEMBER for m in members):
            raise FetchError(f"{wheel.name} has no {LIB_MEMBER}")
        for info in members:
            target = (dest / info.filename).resolve()
            if dest.resolve() not in target.parents:
                raise FetchError(f"{wheel.name}: member {info.filename!r} would leave {dest}")
            zf.extract(info, dest)
    stamp.write_text(wheel.name + "\n")
    return root


def fetch(version: str = DEFAULT_VERSION, python_version: Optional[str] = None,
          plat: Optional[str] = None, cache: Path = DEFAULT_CACHE, with_lib: bool = False,
          pip_python: str = sys.executable) -> Path:
    """Download (if needed) and unpack; return the torch_npu directory holding include/ (and lib/)."""
    python_version = python_version or default_python_version()
    plat = plat or default_platform()
    wheel = download(version, python_version, plat, cache / "wheels", pip_python)
    tag = wheel.name[len(f"torch_npu-{version}-"):-len(".whl")]
    return unpack(wheel, cache / f"torch_npu-{version}-{tag}", with_lib)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", default=DEFAULT_VERSION, help="torch_npu version (default %(default)s)")
    parser.add_argument("--python-version", default=None, help="X.Y (default: this Python)")
    parser.add_argument("--platform", default=None, help="wheel platform tag (default: manylinux_2_28_<arch>)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="cache directory (default %(default)s)")
    parser.add_argument("--with-lib", action="store_true", help="also extract lib/libtorch_npu.so")
    parser.add_argument("--pip-python", default=sys.executable, help="the Python whose pip downloads")
    args = parser.parse_args(argv)
    try:
        root = fetch(args.version, args.python_version, args.platform, args.cache, args.with_lib,
                     args.pip_python)
    except FetchError as exc:
        print(f"fetch_torch_npu_headers: {exc}", file=sys.stderr)
        return EXIT_NETWORK if exc.network else 1
    print(root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
