"""What this machine has: frameworks, torch_npu, torchair, CANN, an Ascend device.

Detection only. Nothing here imports torch, mindspore or torch_npu: installed packages are
found with :func:`importlib.util.find_spec` on top-level names (which does not import them)
and versions come from package metadata. ``torch_npu`` in particular is never imported: its
entry point makes ``import torch`` itself fail where CANN is missing. The one exception is
:func:`import_framework`, which imports torch or mindspore because the caller asked for it.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Dict, Optional

from ._meta import dist_version
from .errors import FrameworkMissing

__all__ = [
    "FRAMEWORKS",
    "SUPPORTED_VERSIONS",
    "CANN_ENV_VARS",
    "CANN_DEFAULT_HOME",
    "CannInfo",
    "Environment",
    "is_installed",
    "is_imported",
    "version",
    "torchair_available",
    "cann",
    "mindspore_has_ascend_plugin",
    "ascend_device_nodes",
    "ascend_device_present",
    "detect",
    "install_hint",
    "import_framework",
]

#: Frameworks an op can have an adapter for: name -> importable top-level module.
FRAMEWORKS: Dict[str, str] = {"torch": "torch", "mindspore": "mindspore"}
#: The framework versions ops are built and tested against (binary adapters are pinned).
SUPPORTED_VERSIONS: Dict[str, str] = {"torch": "2.13.0", "mindspore": "2.10.0"}
#: Environment variables that name a CANN installation, most specific first.
CANN_ENV_VARS = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH")
#: Where the CANN toolkit installs by default.
CANN_DEFAULT_HOME = Path("/usr/local/Ascend/ascend-toolkit")

_DISTRIBUTIONS = {"torch_npu": "torch-npu"}


def is_installed(module: str) -> bool:
    """Tell whether a top-level module can be imported, without importing it.

    Parameters
    ----------
    module : str
        A top-level name such as ``"torch"`` (a dotted name would import its parents).

    Returns
    -------
    bool
    """
    if "." in module:
        raise ValueError(f"is_installed: expects a top-level module name, got {module!r}")
    try:
        return importlib.util.find_spec(module) is not None
    except ValueError:  # imported with __spec__ = None
        return sys.modules.get(module) is not None
    except ImportError:
        return False


def is_imported(module: str) -> bool:
    """Tell whether ``module`` is already imported in this process."""
    return sys.modules.get(module) is not None


def version(distribution: str) -> Optional[str]:
    """Return the installed version of a distribution from its metadata, or None.

    Parameters
    ----------
    distribution : str
        A distribution name (``"torch"``, ``"mindspore"``, ``"torch_npu"``, ...).
    """
    return dist_version(_DISTRIBUTIONS.get(distribution, distribution))


def _spec_dirs(module: str) -> list:
    """Directories of an installed top-level package, from its spec (no import)."""
    if not is_installed(module):
        return []
    spec = importlib.util.find_spec(module)
    if spec is None:
        return []
    return [Path(p) for p in (spec.submodule_search_locations or [])]


def torchair_available() -> bool:
    """Tell whether torchair (the torch_npu graph-mode backend) is installed.

    A top-level ``torchair`` package, or the copy ``torch_npu/dynamo/torchair`` that the
    torch_npu wheel ships; neither is imported.
    """
    if is_installed("torchair"):
        return True
    return any((d / "dynamo" / "torchair" / "__init__.py").is_file() for d in _spec_dirs("torch_npu"))


@dataclass(frozen=True)
class CannInfo:
    """A CANN toolkit found on this machine.

    Attributes
    ----------
    home : pathlib.Path
        The toolkit directory.
    source : str
        How it was found: an environment variable name or ``"default path"``.
    version : str or None
        From the toolkit's install info when readable.
    """

    home: Path
    source: str
    version: Optional[str] = None


def _cann_version(home: Path) -> Optional[str]:
    candidates = [home / "version.cfg", *sorted(home.glob("*-linux/ascend_toolkit_install.info"))]
    for path in candidates:
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            key, sep, value = line.partition("=")
            if sep and key.strip() in ("version", "Version", "toolkit_running_version"):
                return value.strip().strip("[]").split(":")[0] or None
    return None


def cann() -> Optional[CannInfo]:
    """Find a CANN toolkit: ``$ASCEND_HOME_PATH``, ``$ASCEND_TOOLKIT_HOME``, ``$ASCEND_OPP_PATH``
    (the toolkit is its parent), then ``/usr/local/Ascend/ascend-toolkit[/latest]``.

    Returns
    -------
    CannInfo or None
        None when no existing directory is found.
    """
    for var in CANN_ENV_VARS:
        value = os.environ.get(var)
        if not value:
            continue
        home = Path(value)
        if var == "ASCEND_OPP_PATH":
            home = home.parent
        if home.is_dir():
            return CannInfo(home=home, source=var, version=_cann_version(home))
    for home in (CANN_DEFAULT_HOME / "latest", CANN_DEFAULT_HOME):
        if home.is_dir():
            return CannInfo(home=home, source="default path", version=_cann_version(home))
    return None


def mindspore_has_ascend_plugin() -> bool:
    """Tell whether the installed MindSpore ships its Ascend backend plugin (not imported)."""
    for d in _spec_dirs("mindspore"):
        plugin = d / "lib" / "plugin"
        if (plugin / "ascend").is_dir() or any(plugin.glob("libmindspore_ascend.so*")):
            return True
    return False


def ascend_device_nodes(dev: Path = Path("/dev")) -> list:
    """Return the Ascend device nodes the driver created (``/dev/davinci<N>``)."""
    try:
        return sorted(p for p in dev.glob("davinci[0-9]*") if p.name[len("davinci"):].isdigit())
    except OSError:
        return []


def ascend_device_present() -> bool:
    """Tell whether an Ascend NPU can be used here.

    True only when all of these say so: a CANN toolkit is found, the driver exposes a
    ``/dev/davinci<N>`` node, and a framework with an Ascend backend is installed (torch_npu,
    or MindSpore with its Ascend plugin). Nothing is imported, no device is opened.
    """
    if cann() is None or not ascend_device_nodes():
        return False
    return is_installed("torch_npu") or mindspore_has_ascend_plugin()


@dataclass(frozen=True)
class Environment:
    """A snapshot of :func:`detect`.

    Attributes
    ----------
    python : str
        ``major.minor.micro``.
    versions : dict
        Distribution -> version or None: numpy, torch, mindspore, torch_npu.
    torchair : bool
    cann : CannInfo or None
    ascend_device : bool
    """

    python: str
    versions: Dict[str, Optional[str]] = field(default_factory=dict)
    torchair: bool = False
    cann: Optional[CannInfo] = None
    ascend_device: bool = False


def detect() -> Environment:
    """Describe this machine without importing any framework.

    Returns
    -------
    Environment
    """
    return Environment(
        python=".".join(str(v) for v in sys.version_info[:3]),
        versions={name: version(name) for name in ("numpy", "torch", "mindspore", "torch_npu")},
        torchair=torchair_available(),
        cann=cann(),
        ascend_device=ascend_device_present(),
    )


def install_hint(framework: str) -> str:
    """Return the install command for a supported framework, e.g. ``pip install torch==2.13.0``."""
    if framework not in SUPPORTED_VERSIONS:
        raise ValueError(f"framework should be one of {list(SUPPORTED_VERSIONS)}, got {framework!r}")
    return f"pip install {framework}=={SUPPORTED_VERSIONS[framework]}"


def import_framework(framework: str) -> ModuleType:
    """Import torch or mindspore on request.

    For torch, ``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` is set first unless the caller set it, so
    an installed torch_npu is not auto-loaded (it breaks ``import torch`` without CANN).

    Parameters
    ----------
    framework : {"torch", "mindspore"}

    Returns
    -------
    module

    Raises
    ------
    FrameworkMissing
        If it is not installed; the message gives the pip command.
    """
    if framework not in FRAMEWORKS:
        raise ValueError(f"framework should be one of {list(FRAMEWORKS)}, got {framework!r}")
    module = FRAMEWORKS[framework]
    if not is_installed(module):
        raise FrameworkMissing(f"{framework} is not installed: {install_hint(framework)}", name=module)
    if framework == "torch":
        os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
    return importlib.import_module(module)
