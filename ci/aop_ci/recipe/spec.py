"""Conda match specs as plain strings: split, name, and conda-build's pin expressions."""

from __future__ import annotations

import re
from typing import Optional, Tuple

__all__ = ["split_spec", "spec_name", "apply_pin_expressions", "ensure_valid_spec",
           "pep440_to_conda"]

_OPERATOR = re.compile(r"[<>=!~*,|]")


def split_spec(spec: str) -> Tuple[str, Optional[str], Optional[str]]:
    """``"numpy >=1.22,<2 py*"`` -> ``("numpy", ">=1.22,<2", "py*")``."""
    parts = str(spec).split()
    if not parts:
        raise ValueError("empty match spec")
    name = parts[0]
    version = parts[1] if len(parts) > 1 else None
    build = " ".join(parts[2:]) if len(parts) > 2 else None
    return name, version, build


def spec_name(spec: str) -> str:
    return split_spec(spec)[0]


def ensure_valid_spec(spec: str) -> str:
    """conda-build's normalisation: a bare version ``"14"`` becomes ``"14.*"``."""
    name, version, build = split_spec(spec)
    if version and not _OPERATOR.search(version):
        version = f"{version}.*"
    return " ".join(p for p in (name, version, build) if p)


def _numeric_parts(version: str) -> list:
    parts = []
    for piece in re.split(r"[._-]", version):
        m = re.match(r"\d+", piece)
        if not m:
            break
        parts.append(int(m.group()))
    return parts


def apply_pin_expressions(version: str, min_pin: str = "x.x.x.x.x.x.x", max_pin: str = "x") -> str:
    """conda-build's pin: ``("0.1.0", max_pin="x.x")`` -> ``">=0.1.0,<0.2.0a0"``.

    The lower bound keeps ``len(min_pin.split('.'))`` places of ``version``; the upper bound
    keeps ``len(max_pin.split('.'))`` places, increments the last and appends ``.0a0``.
    """
    parts = _numeric_parts(version)
    if not parts:
        raise ValueError(f"cannot pin non-numeric version {version!r}")
    lower_n = len(min_pin.split(".")) if min_pin else 0
    upper_n = min(len(max_pin.split(".")), len(parts)) if max_pin else 0
    pieces = []
    if lower_n:
        pieces.append(">=" + ".".join(str(p) for p in parts[:lower_n]))
    if upper_n:
        upper = parts[:upper_n]
        upper[-1] += 1
        pieces.append("<" + ".".join(str(p) for p in upper) + ".0a0")
    return ",".join(pieces)


def pep440_to_conda(requirement: str) -> Tuple[str, Optional[str]]:
    """A PEP 508 requirement without markers -> (conda name, conda version spec or None).

    ``"numpy>=1.22,<2"`` -> ``("numpy", ">=1.22,<2")``; ``"x==0.1.*"`` -> ``("x", "0.1.*")``.
    """
    from packaging.requirements import Requirement
    req = Requirement(requirement)
    specs = sorted(str(s) for s in req.specifier)
    converted = []
    for s in specs:
        if s.startswith("==") and not s.startswith("==="):
            converted.append(s[2:])
        elif s.startswith("~="):
            base = s[2:]
            keep = base.split(".")[:-1]
            converted.append(f">={base},<{'.'.join(keep[:-1] + [str(int(keep[-1]) + 1)])}" if keep
                             else f">={base}")
        else:
            converted.append(s)
    return req.name.lower().replace("_", "-"), (",".join(converted) if converted else None)
