"""Render a classic ``meta.yaml``: an **emulation** of conda-build, not conda-build.

What is emulated, in conda-build's order:

1. variants: ``conda_build_config.yaml`` (its own ``# [selector]`` lines applied first) gives
   lists of values per key; a recipe is rendered once per combination of the keys it *uses*
   (named in its Jinja, its selectors, or as a bare ``build``/``host`` requirement, plus the
   compiler keys of ``compiler()`` / ``stdlib()``), ``zip_keys`` moving together;
2. Jinja2 with conda-build's context: the variant values, ``compiler``, ``stdlib``,
   ``pin_subpackage``, ``pin_compatible`` (variant-pinned names only), ``load_file_regex``,
   ``load_file_data``, ``load_str_data``, ``environ``, ``os``, the selector names and
   ``PYTHON`` / ``PY_VER`` / ``CONDA_PY`` / ``PKG_HASH`` / ``PKG_BUILDNUM``. A first lenient
   pass finds the package name, version, build number and source (like conda-build's
   ``permit_undefined_jinja`` pass); the second pass is strict: an undefined name fails;
3. ``# [expr]`` selectors evaluated per line (an unknown name fails);
4. YAML; bare ``build``/``host`` requirements that are variant keys get the variant's
   version (``python`` -> ``python 3.11.*``).

``{{ PYTHON }}`` renders as ``$PYTHON`` (the build script's variable). ``pin_run_as_build``
(``python`` in ``run`` -> ``python >=3.11,<3.12.0a0``) needs the solved host environment and is
applied by the build stage.
"""

from __future__ import annotations

import ast
import hashlib
import itertools
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from .spec import apply_pin_expressions, ensure_valid_spec, split_spec

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = ["EMULATION_NOTE", "PLATFORMS", "RenderError", "VariantConfig", "Rendered",
           "load_config", "selector_namespace", "apply_selectors", "render_recipe"]

EMULATION_NOTE = ("render/lint: an emulation of conda-build's meta.yaml handling (Jinja2 with "
                  "conda-build's functions, # [selector] lines, conda_build_config.yaml "
                  "variants), written for this repository; conda-build itself is not run")

#: Platforms we render for: subdir -> (arch names true in selectors, conda-forge HOST triplet).
PLATFORMS: Dict[str, Dict[str, Any]] = {
    "linux-64": {"arch": "x86_64", "bits": "64", "triplet": "x86_64-conda-linux-gnu",
                 "true": ("linux", "linux64", "unix", "x86_64", "x86")},
    "linux-aarch64": {"arch": "aarch64", "bits": "64", "triplet": "aarch64-conda-linux-gnu",
                      "true": ("linux", "unix", "aarch64", "arm64")},
}
_ALL_SELECTOR_FLAGS = ("linux", "linux32", "linux64", "unix", "x86", "x86_64", "aarch64", "arm64",
                       "armv6l", "armv7l", "ppc64le", "ppc64", "s390x", "osx", "win", "win32",
                       "win64", "emscripten", "wasm32")
DEFAULT_COMPILERS = {"c": "gcc", "cxx": "gxx", "fortran": "gfortran"}
_SELECTOR = re.compile(r"^(?P<body>.*?)\s*#\s*\[(?P<expr>[^\[\]]+)\]\s*$")
_TOP_KEYS_NEEDED = ("package",)


class RenderError(Exception):
    """The recipe (or the variant config) does not render; the message says where and why."""


# --- variant configuration ---------------------------------------------------------------
@dataclass
class VariantConfig:
    """``conda_build_config.yaml`` for one platform: key -> list of values."""

    values: Dict[str, List[str]]
    zip_keys: List[List[str]] = field(default_factory=list)
    pin_run_as_build: Dict[str, Dict[str, str]] = field(default_factory=dict)
    path: Optional[Path] = None

    def first(self) -> Dict[str, str]:
        return {k: v[0] for k, v in self.values.items() if v}


def selector_namespace(platform: str, variant: Mapping[str, str]) -> Dict[str, Any]:
    """The names a ``# [expr]`` selector (and the recipe's Jinja) may use."""
    if platform not in PLATFORMS:
        raise RenderError(f"unknown platform {platform!r} (known: {', '.join(PLATFORMS)})")
    info = PLATFORMS[platform]
    ns: Dict[str, Any] = {flag: flag in info["true"] for flag in _ALL_SELECTOR_FLAGS}
    ns.update(target_platform=platform, build_platform=platform, subdir=platform)
    python = str(variant.get("python", ""))
    if python:
        major_minor = python.split(".")[:2]
        ns["py"] = int("".join(major_minor)) if all(p.isdigit() for p in major_minor) else 0
        ns["py3k"] = python.startswith("3")
        ns["py2k"] = python.startswith("2")
    numpy = str(variant.get("numpy", ""))
    if numpy:
        ns["np"] = int("".join(numpy.split(".")[:2]))
    for key, value in variant.items():
        ns.setdefault(key, value)
    ns["os"] = os
    ns["environ"] = os.environ
    return ns


def apply_selectors(text: str, ns: Mapping[str, Any], where: str) -> str:
    """Drop every line whose ``# [expr]`` is false; strip the selector from the others."""
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        m = _SELECTOR.match(line)
        if not m:
            out.append(line)
            continue
        expr = m.group("expr").strip()
        try:
            keep = eval(compile(expr, f"{where}:{lineno}", "eval"), {"__builtins__": {}}, dict(ns))
        except NameError as exc:
            raise RenderError(f"{where}:{lineno}: selector [{expr}]: {exc} (conda-build knows "
                              f"platform names, py, np and the variant keys)") from exc
        except SyntaxError as exc:
            raise RenderError(f"{where}:{lineno}: selector [{expr}] is not an expression: {exc}")
        if keep:
            out.append(m.group("body"))
    return "\n".join(out) + "\n"


def load_config(path: Path, platform: str) -> VariantConfig:
    """Read ``conda_build_config.yaml`` for ``platform`` (its selectors applied first)."""
    import yaml
    text = Path(path).read_text(encoding="utf-8")
    ns = selector_namespace(platform, {})
    data = yaml.safe_load(apply_selectors(text, ns, str(path))) or {}
    if not isinstance(data, dict):
        raise RenderError(f"{path}: expected a mapping of variant keys")
    zip_keys = data.pop("zip_keys", []) or []
    pin_run_as_build = data.pop("pin_run_as_build", {}) or {}
    values: Dict[str, List[str]] = {}
    for key, val in data.items():
        if not isinstance(val, list):
            raise RenderError(f"{path}: {key} should be a list of values, got {val!r}")
        values[key] = [str(v) for v in val]
    for group in zip_keys:
        lengths = {k: len(values.get(k, [])) for k in group}
        if len(set(lengths.values())) > 1:
            raise RenderError(f"{path}: zip_keys {group} have different lengths {lengths}")
    return VariantConfig(values=values, zip_keys=[list(g) for g in zip_keys],
                         pin_run_as_build=pin_run_as_build, path=Path(path))


# --- Jinja --------------------------------------------------------------------------------
def _lenient_undefined():
    import jinja2

    class NeverFail(jinja2.Undefined):
        """conda-build's first pass: an undefined value renders as nothing and never raises."""

        def __str__(self) -> str:
            return ""

        def __getattr__(self, name: str):
            if name.startswith("__"):
                raise AttributeError(name)
            return NeverFail()

        def __call__(self, *args, **kwargs):
            return NeverFail()

        def __getitem__(self, key):
            return NeverFail()

        __iter__ = jinja2.Undefined.__iter__

    return NeverFail


@dataclass
class _Pass:
    """What the Jinja functions need to know about the render in progress."""

    recipe_dir: Path
    work_dir: Optional[Path]
    platform: str
    variant: Dict[str, str]
    strict: bool
    own_name: Optional[str] = None
    own_version: Optional[str] = None
    used_functions: List[str] = field(default_factory=list)


def _find_file(p: _Pass, name: str, from_recipe_dir: bool) -> Optional[Path]:
    path = Path(name)
    if path.is_absolute():
        return path if path.is_file() else None
    base = p.recipe_dir if from_recipe_dir else p.work_dir
    if base is None:
        return None
    candidate = (base / path).resolve()
    return candidate if candidate.is_file() else None


def _functions(p: _Pass) -> Dict[str, Any]:
    def missing(what: str):
        if p.strict:
            raise RenderError(what)
        return None

    def load_file_regex(load_file, regex_pattern, from_recipe_dir=False, recipe_dir=None,
                        permit_undefined_jinja=True):
        p.used_functions.append("load_file_regex")
        path = _find_file(p, str(load_file), from_recipe_dir)
        if path is None:
            return missing(f"load_file_regex: no file {load_file!r} (relative to the "
                           f"{'recipe' if from_recipe_dir else 'source'} directory)")
        return re.search(regex_pattern, path.read_text(encoding="utf-8"))

    def _parse(text: str, fmt: str):
        import yaml
        fmt = fmt.lower()
        if fmt == "toml":
            return tomllib.loads(text)
        if fmt == "json":
            return json.loads(text)
        if fmt in ("yaml", "yml"):
            return yaml.safe_load(text)
        raise RenderError(f"unknown file format {fmt!r} (json, yaml, toml)")

    def load_file_data(filename, fmt=None, *args, from_recipe_dir=False, recipe_dir=None,
                       permit_undefined_jinja=True, **kwargs):
        p.used_functions.append("load_file_data")
        path = _find_file(p, str(filename), from_recipe_dir)
        if path is None:
            missing(f"load_file_data: no file {filename!r}")
            return {}
        return _parse(path.read_text(encoding="utf-8"), fmt or path.suffix.lstrip("."))

    def load_str_data(string, fmt, *args, **kwargs):
        return _parse(string, fmt)

    def compiler(language):
        p.used_functions.append(f"compiler:{language}")
        name = p.variant.get(f"{language}_compiler", DEFAULT_COMPILERS.get(language, language))
        spec = f"{name}_{p.variant.get('target_platform', p.platform)}"
        version = p.variant.get(f"{language}_compiler_version")
        return ensure_valid_spec(f"{spec} {version}") if version else spec

    def stdlib(language):
        p.used_functions.append(f"stdlib:{language}")
        name = p.variant.get(f"{language}_stdlib")
        if not name:
            return missing(f"stdlib({language!r}): the variant config has no {language}_stdlib")
        spec = f"{name}_{p.variant.get('target_platform', p.platform)}"
        version = p.variant.get(f"{language}_stdlib_version")
        return ensure_valid_spec(f"{spec} {version}") if version else spec

    def pin_subpackage(subpackage_name, min_pin="x.x.x.x.x.x", max_pin="x", exact=False,
                       allow_no_other_outputs=False):
        p.used_functions.append("pin_subpackage")
        if exact:
            raise RenderError("pin_subpackage(exact=True) is not emulated")
        if not p.strict and not p.own_version:
            return subpackage_name
        if subpackage_name != p.own_name:
            raise RenderError(f"pin_subpackage({subpackage_name!r}): not this recipe's package "
                              f"{p.own_name!r} (multi-output recipes are not emulated)")
        return f"{subpackage_name} {apply_pin_expressions(p.own_version, min_pin, max_pin)}"

    def pin_compatible(package_name, lower_bound=None, upper_bound=None, min_pin="x.x.x.x.x.x",
                       max_pin="x", exact=False):
        p.used_functions.append("pin_compatible")
        version = lower_bound or p.variant.get(package_name)
        if not version:
            return missing(f"pin_compatible({package_name!r}): only names with a variant value "
                           f"are emulated (conda-build reads the solved host environment)")
        if upper_bound:
            return f"{package_name} >={version},<{upper_bound}"
        return f"{package_name} {apply_pin_expressions(version, min_pin, max_pin)}"

    def cdt(name):
        raise RenderError("cdt() is not emulated")

    return dict(load_file_regex=load_file_regex, load_file_data=load_file_data,
                load_str_data=load_str_data, compiler=compiler, stdlib=stdlib,
                pin_subpackage=pin_subpackage, pin_compatible=pin_compatible, cdt=cdt)


def _jinja_render(text: str, p: _Pass, extra: Mapping[str, Any], where: str) -> str:
    import jinja2
    env = jinja2.Environment(undefined=jinja2.StrictUndefined if p.strict else _lenient_undefined(),
                             keep_trailing_newline=True)
    ctx: Dict[str, Any] = {}
    ctx.update(selector_namespace(p.platform, p.variant))
    ctx.update(p.variant)
    ctx.update(_functions(p))
    ctx.update(extra)
    try:
        return env.from_string(text).render(**ctx)
    except RenderError as exc:
        raise RenderError(f"{where}: {exc}") from exc
    except jinja2.TemplateSyntaxError as exc:
        raise RenderError(f"{where}:{exc.lineno}: Jinja syntax: {exc.message}") from exc
    except jinja2.UndefinedError as exc:
        raise RenderError(f"{where}: Jinja: {exc.message}") from exc
    except (TypeError, AttributeError, KeyError, ValueError) as exc:
        raise RenderError(f"{where}: Jinja: {type(exc).__name__}: {exc}") from exc


def _used_keys(text: str, config: VariantConfig, requirement_names: Iterable[str],
               functions: Iterable[str]) -> List[str]:
    import jinja2
    from jinja2 import meta
    keys = set(meta.find_undeclared_variables(jinja2.Environment().parse(text)))
    for line in text.splitlines():
        m = _SELECTOR.match(line)
        if m:
            try:
                tree = ast.parse(m.group("expr").strip(), mode="eval")
            except SyntaxError:
                continue
            keys.update(n.id for n in ast.walk(tree) if isinstance(n, ast.Name))
    keys.update(requirement_names)
    for fn in functions:
        kind, _, lang = fn.partition(":")
        if kind == "compiler":
            keys.update({f"{lang}_compiler", f"{lang}_compiler_version"})
        elif kind == "stdlib":
            keys.update({f"{lang}_stdlib", f"{lang}_stdlib_version"})
    used = {k for k in keys if k in config.values}
    for group in config.zip_keys:  # a zipped key drags its partners along
        if used & set(group):
            used |= {k for k in group if k in config.values}
    return sorted(used)


def _combinations(config: VariantConfig, keys: Sequence[str]) -> List[Dict[str, str]]:
    groups: List[List[Dict[str, str]]] = []
    seen = set()
    for group in config.zip_keys:
        members = [k for k in group if k in keys]
        if not members:
            continue
        seen.update(members)
        n = len(config.values[members[0]])
        groups.append([{k: config.values[k][i] for k in members} for i in range(n)])
    for key in keys:
        if key not in seen:
            groups.append([{key: v} for v in config.values[key]])
    combos = []
    for choice in itertools.product(*groups):
        variant: Dict[str, str] = {}
        for part in choice:
            variant.update(part)
        combos.append(variant)
    return combos or [{}]


# --- rendering ----------------------------------------------------------------------------
@dataclass
class Rendered:
    """One rendered variant of a recipe on one platform."""

    name: str
    version: str
    build_number: int
    build_string: str
    meta: Dict[str, Any]
    variant: Dict[str, str]
    platform: str
    recipe_dir: Path
    source_dir: Optional[Path]
    text: str
    skip: bool

    def requirements(self, section: str) -> List[str]:
        reqs = (self.meta.get("requirements") or {}).get(section) or []
        return [str(r) for r in reqs]

    @property
    def build(self) -> Dict[str, Any]:
        return self.meta.get("build") or {}

    @property
    def test(self) -> Dict[str, Any]:
        return self.meta.get("test") or {}

    @property
    def about(self) -> Dict[str, Any]:
        return self.meta.get("about") or {}

    @property
    def dist_name(self) -> str:
        """``name-version-build``: the package file's stem."""
        return f"{self.name}-{self.version}-{self.build_string}"

    def label(self) -> str:
        keys = [k for k in sorted(self.variant) if not k.endswith(("_compiler", "_compiler_version",
                                                                   "_stdlib", "_stdlib_version"))]
        return ",".join(f"{k}={self.variant[k]}" for k in keys) or "-"


def _pkg_hash(variant: Mapping[str, str]) -> str:
    blob = json.dumps(dict(sorted(variant.items())), sort_keys=True).encode()
    return hashlib.sha1(blob).hexdigest()[:7]


def _pin_variant_requirements(meta: Dict[str, Any], variant: Mapping[str, str]) -> None:
    reqs = meta.get("requirements") or {}
    for section in ("build", "host"):
        items = reqs.get(section) or []
        pinned = []
        for item in items:
            item = str(item)
            name, version, build = split_spec(item)
            key = name if name in variant else name.replace("-", "_")
            if version is None and key in variant:
                item = ensure_valid_spec(f"{name} {variant[key]}")
            pinned.append(item)
        if items:
            reqs[section] = pinned


def _yaml(text: str, where: str) -> Dict[str, Any]:
    import yaml
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise RenderError(f"{where}: rendered text is not YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise RenderError(f"{where}: rendered text is not a mapping")
    return data


def _first_pass(text: str, recipe_dir: Path, platform: str, variant: Dict[str, str],
                where: str) -> Tuple[Dict[str, Any], _Pass]:
    p = _Pass(recipe_dir=recipe_dir, work_dir=None, platform=platform, variant=variant,
              strict=False)
    extra = _jinja_extra(variant, recipe_dir, "0", "0000000")
    rendered = _jinja_render(text, p, extra, where)
    try:
        meta = _yaml(apply_selectors(rendered, selector_namespace(platform, variant), where), where)
    except RenderError:
        meta = {}
    return meta, p


def _jinja_extra(variant: Mapping[str, str], recipe_dir: Path, buildnum: str, pkg_hash: str):
    python = variant.get("python", "")
    return {"PYTHON": "$PYTHON", "PY_VER": python, "CONDA_PY": python.replace(".", ""),
            "RECIPE_DIR": str(recipe_dir), "PKG_BUILDNUM": buildnum, "PKG_HASH": pkg_hash}


def _render_variant(text: str, recipe_dir: Path, platform: str, variant: Dict[str, str]) -> Rendered:
    where = str(recipe_dir / "meta.yaml")
    meta1, _ = _first_pass(text, recipe_dir, platform, variant, where)
    pkg1 = meta1.get("package") or {}
    source = (meta1.get("source") or {})
    source_dir = None
    if isinstance(source, dict) and source.get("path"):
        source_dir = (recipe_dir / str(source["path"])).resolve()
    number = str((meta1.get("build") or {}).get("number", "0") or "0")
    pkg_hash = _pkg_hash(variant)
    p = _Pass(recipe_dir=recipe_dir, work_dir=source_dir, platform=platform, variant=variant,
              strict=True, own_name=str(pkg1.get("name") or "") or None,
              own_version=str(pkg1.get("version") or "") or None)
    rendered = _jinja_render(text, p, _jinja_extra(variant, recipe_dir, number, pkg_hash), where)
    selected = apply_selectors(rendered, selector_namespace(platform, variant), where)
    meta = _yaml(selected, where)
    package = meta.get("package") or {}
    for key in ("name", "version"):
        if not package.get(key):
            raise RenderError(f"{where}: package/{key} is missing or empty after rendering")
    _pin_variant_requirements(meta, variant)
    build = meta.get("build") or {}
    try:
        build_number = int(build.get("number", 0))
    except (TypeError, ValueError) as exc:
        raise RenderError(f"{where}: build/number {build.get('number')!r} is not an integer") from exc
    python = variant.get("python", "")
    build_string = str(build.get("string") or
                       (f"py{python.replace('.', '')}" if python else "") + f"h{pkg_hash}_{build_number}")
    return Rendered(name=str(package["name"]), version=str(package["version"]),
                    build_number=build_number, build_string=build_string, meta=meta,
                    variant=dict(variant), platform=platform, recipe_dir=recipe_dir,
                    source_dir=source_dir, text=selected, skip=bool(build.get("skip", False)))


def render_recipe(recipe_dir: Path, config: VariantConfig, platform: str,
                  overrides: Optional[Mapping[str, str]] = None) -> List[Rendered]:
    """Render every variant of ``recipe_dir/meta.yaml`` for ``platform``.

    Skipped variants (``build/skip`` true) are returned with ``skip=True``. ``overrides``
    replaces the values of keys a variant uses (the build stage puts this machine's compiler
    and C library versions in place of the channel's).

    Raises
    ------
    RenderError
        On a missing recipe, a Jinja or selector error, an undefined name, a failed file
        lookup, or text that is not a YAML mapping with a package name and version.
    """
    recipe_dir = Path(recipe_dir).resolve()
    path = recipe_dir / "meta.yaml"
    if not path.is_file():
        raise RenderError(f"{path}: no recipe")
    text = path.read_text(encoding="utf-8")
    base = config.first()
    base["target_platform"] = platform
    meta1, p1 = _first_pass(text, recipe_dir, platform, base, str(path))
    names = []
    for section in ("build", "host"):
        for req in ((meta1.get("requirements") or {}).get(section) or []):
            if req:
                name = split_spec(str(req))[0]
                names += [name, name.replace("-", "_")]
    used = _used_keys(text, config, names, p1.used_functions)
    results = []
    for combo in _combinations(config, used):
        combo["target_platform"] = platform
        combo.update({k: str(v) for k, v in (overrides or {}).items() if k in combo})
        results.append(_render_variant(text, recipe_dir, platform, combo))
    return results
