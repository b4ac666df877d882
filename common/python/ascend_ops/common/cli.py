"""``ascend-ops``: what is installed, what was built, does it work.

Subcommands: ``list``, ``stats``, ``check [op ...]``, ``platforms``, and those other installed packages add
through the ``ascend_ops.cli`` entry-point group (``demo``, from ``ascend-ops``). Each has ``--help``.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import Dict, List, Optional, Sequence, TextIO

from . import _clib
from .table import format_table
from .errors import NativeImportError
from .frameworks import FRAMEWORKS, SUPPORTED_VERSIONS, detect
from .registry import BACKENDS, FAILED, NPU_ADAPTERS, PASSED, SKIPPED, BrokenOp, OpInfo, installed_ops

__all__ = ["main", "build_parser"]

NO_OPS = "no ops installed"


def _out() -> TextIO:
    return sys.stdout


def _short(status: str) -> str:
    """``"not built: CANN was not found..."`` -> ``"not built"``."""
    return status.split(":", 1)[0]


def _common_lines() -> List[str]:
    lines = []
    try:
        version, abi = _clib.common_version(), _clib.common_abi()
        lines.append(f"ascend-op-common {version} (C ABI {abi}): {_clib.library_file()}")
    except NativeImportError as exc:
        lines.append(f"ascend-op-common library: unavailable: {exc}")
        return lines
    try:
        p = _clib.current_platform()
        kind = "device" if p.is_real_device else "preset"
        lines.append(f"platform: {p.soc} ({p.family}, {kind}): {p.aiv_cores} AIV, "
                     f"{p.aic_cores} AIC, UB {p.ub_bytes} bytes")
    except ValueError as exc:
        lines.append(f"platform: error: {exc}")
    return lines


def _environment_line() -> str:
    env = detect()
    v = env.versions
    cann = f"{env.cann.version or 'found'} ({env.cann.home})" if env.cann else None
    parts = [f"python {env.python}", f"numpy {v['numpy'] or '-'}", f"torch {v['torch'] or '-'}",
             f"mindspore {v['mindspore'] or '-'}", f"torch_npu {v['torch_npu'] or '-'}",
             f"torchair {'yes' if env.torchair else 'no'}", f"CANN {cann or '-'}",
             f"Ascend device {'yes' if env.ascend_device else 'no'}"]
    return " | ".join(parts)


# --- list ----------------------------------------------------------------------------------
def _cmd_list(args: argparse.Namespace) -> int:
    out = _out()
    ops = installed_ops()
    rows, notes, records = [], [], []
    for op in ops:
        if isinstance(op, BrokenOp):
            rows.append([op.name, op.package, "-"] + ["error"] * (len(BACKENDS) + len(FRAMEWORKS) + len(NPU_ADAPTERS)))
            notes.append(f"{op.name}: {op.error}")
            records.append({"op": op.name, "package": op.package, "error": op.error})
            continue
        backends, frameworks = op.backends(), op.frameworks()
        cells = [_short(backends.get(b, "-")) for b in BACKENDS]
        reasons: Dict[str, List[str]] = {}
        for backend in BACKENDS:
            status = backends.get(backend, "-")
            if ":" in status:
                reasons.setdefault(status, []).append(backend)
        for status, names in reasons.items():
            notes.append(f"{op.name}: {', '.join(names)} {status}")
        for framework in FRAMEWORKS:
            status = frameworks.get(framework, "-")
            cells.append(_short(status))
            if status == "not built":
                notes.append(f"{op.name}: {framework} adapter not built: {framework} was absent "
                             f"when the op was built; reinstall the op with "
                             f"{framework}=={SUPPORTED_VERSIONS[framework]} present")
            elif status.startswith("error"):
                notes.append(f"{op.name}: {framework}: {status}")
        npu_adapters = op.npu_adapters()
        for adapter in NPU_ADAPTERS:
            status = npu_adapters.get(adapter, "-")
            cells.append(_short(status))
            if ":" in status:
                notes.append(f"{op.name}: {adapter} adapter {status}")
        rows.append([op.name, op.package, op.version] + cells)
        records.append({"op": op.name, "package": op.package, "version": op.version,
                        "backends": backends, "frameworks": frameworks, "npu_adapters": npu_adapters})
    if args.json:
        print(json.dumps({"ops": records}, indent=2), file=out)
        return 0
    for line in _common_lines() + [_environment_line(), ""]:
        print(line, file=out)
    if not ops:
        print(NO_OPS, file=out)
        return 0
    print(format_table(["op", "package", "version", *BACKENDS, *FRAMEWORKS, *NPU_ADAPTERS], rows), file=out)
    if notes:
        print("\nnotes:", file=out)
        for note in notes:
            print(f"  {note}", file=out)
    return 0


# --- stats ---------------------------------------------------------------------------------
def _cmd_stats(args: argparse.Namespace) -> int:
    out = _out()
    try:
        caches, pools = _clib.cache_stats(), _clib.pool_stats()
    except NativeImportError as exc:
        print(f"ascend-ops stats: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"caches": caches, "pools": pools}, indent=2), file=out)
        return 0
    cache_rows = []
    for c in caches:
        lookups = c["hits"] + c["misses"]
        rate = c["hits"] / lookups if lookups else None
        cache_rows.append([c["name"], c["capacity"], c["size"], c["hits"], c["misses"], rate,
                           c["inserts"], c["evictions"]])
    print("caches", file=out)
    print(format_table(["name", "capacity", "size", "hits", "misses", "hit rate", "inserts",
                        "evictions"], cache_rows), file=out)
    pool_keys = ["limit_bytes", "in_use_bytes", "cached_bytes", "peak_bytes", "allocations",
                 "deallocations", "reuses", "acquires", "live_blocks"]
    print("\npools", file=out)
    print(format_table(["name", "limit B", "in use B", "cached B", "peak B", "allocs", "deallocs",
                        "reuses", "acquires", "live"],
                       [[p["name"]] + [p[k] for k in pool_keys] for p in pools]), file=out)
    print("\ncounters of this process; call ascend_ops.common.cache_stats() / pool_stats() "
          "inside a program to see its own", file=out)
    return 0


# --- check ---------------------------------------------------------------------------------
def _aliases(op: OpInfo) -> List[str]:
    return [op.name, op.name.replace("_", "-"), op.package]


def _select(ops: Sequence[OpInfo], names: Sequence[str]) -> Optional[List[OpInfo]]:
    """The ops named, in order; a package's name selects every op it ships."""
    if not names:
        return list(ops)
    table: Dict[str, List[OpInfo]] = {}
    for op in ops:
        for alias in dict.fromkeys(_aliases(op)):
            table.setdefault(alias, []).append(op)
    unknown = [n for n in names if n not in table]
    if unknown:
        known = ", ".join(op.name for op in ops) or "none"
        print(f"ascend-ops check: not installed: {', '.join(unknown)} (installed: {known})",
              file=sys.stderr)
        return None
    chosen: List[OpInfo] = []
    for n in names:
        chosen.extend(op for op in table[n] if op not in chosen)
    return chosen


def _cmd_check(args: argparse.Namespace) -> int:
    out = _out()
    ops = installed_ops()
    if not ops and not args.ops:
        print(NO_OPS, file=out)
        return 0
    chosen = _select(ops, args.ops)
    if chosen is None:
        return 2
    results = []
    for op in chosen:
        results.extend(op.check(backends=args.backend))
    print(format_table(["op", "backend", "mode", "status", "detail"],
                       [[r.op, r.backend, r.mode, r.status, r.detail] for r in results]), file=out)
    counts = {s: sum(r.status == s for r in results) for s in (PASSED, FAILED, SKIPPED)}
    print(f"\n{counts[PASSED]} passed, {counts[FAILED]} failed, {counts[SKIPPED]} skipped", file=out)
    failed = sorted({r.op for r in results if r.status == FAILED})
    if failed:
        print(f"FAILED: {', '.join(failed)}", file=out)
        return 1
    return 0


# --- platforms -----------------------------------------------------------------------------
def _cmd_platforms(args: argparse.Namespace) -> int:
    out = _out()
    try:
        presets = _clib.platform_presets()
        current = _clib.current_platform()
    except NativeImportError as exc:
        print(f"ascend-ops platforms: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"current": asdict(current), "presets": [asdict(p) for p in presets]},
                         indent=2), file=out)
        return 0
    rows = [["*" if p.soc == current.soc else "", p.soc, p.family, p.aiv_cores, p.aic_cores,
             p.ub_bytes, p.l1_bytes, p.l0a_bytes, p.l0b_bytes, p.l0c_bytes] for p in presets]
    print(format_table(["", "soc", "family", "AIV", "AIC", "UB B", "L1 B", "L0A B", "L0B B",
                        "L0C B"], rows), file=out)
    kind = "real device" if current.is_real_device else "preset; $ASCEND_OPS_PLATFORM selects another"
    print(f"\n* current: {current.soc} ({kind})", file=out)
    return 0


# --- subcommands of other packages ----------------------------------------------------------
#: Entry-point group of the subcommands other packages add: ``name = "module:add_parser"``, where
#: ``add_parser(subparsers)`` adds the subcommand ``name`` and sets its ``func`` default (the
#: integration package ``ascend-ops`` adds ``demo`` this way).
CLI_GROUP = "ascend_ops.cli"


def _unavailable(reason: str) -> int:
    print(f"ascend-ops: {reason}", file=sys.stderr)
    return 1


def _add_plugin_commands(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    from importlib.metadata import entry_points

    for ep in sorted(entry_points(group=CLI_GROUP), key=lambda e: e.name):
        if ep.name in sub.choices:
            continue  # the runtime's own subcommands are not replaced
        try:
            add_parser = ep.load()
        except Exception as exc:  # a broken package must not break `ascend-ops list`
            reason = f"{ep.value} failed to import: {type(exc).__name__}: {exc}"
            p = sub.add_parser(ep.name, help=f"(unavailable: {reason})")
            p.set_defaults(func=lambda _args, reason=reason: _unavailable(reason))
            continue
        add_parser(sub)


def build_parser() -> argparse.ArgumentParser:
    """Return the ``ascend-ops`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="ascend-ops",
        description="Inspect the installed ascend-ops operators and their shared runtime.",
    )
    parser.add_argument("--version", action="store_true",
                        help="print the ascend-op-common version and C ABI, then exit")
    sub = parser.add_subparsers(dest="command", metavar="command")

    p = sub.add_parser("list", help="installed ops, their built backends and adapters",
                       description="List installed ops: package version, built backends "
                                   "(cpu, emu, npu) and framework adapters, with the common "
                                   "runtime's version, ABI, platform and this machine's frameworks.")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_cmd_list)

    p = sub.add_parser("stats", help="cache and workspace pool counters",
                       description="Print the tiling / operator cache counters and the "
                                   "workspace pool counters of this process.")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_cmd_stats)

    p = sub.add_parser("check", help="run the ops' smoke checks against their references",
                       description="Run each op's check cases (every built backend and "
                                   "front door against the NumPy reference). Exit status 1 "
                                   "if any failed.")
    p.add_argument("ops", nargs="*", help="op or package names (a package: every op it ships; default: every installed op)")
    p.add_argument("--backend", action="append", choices=BACKENDS,
                   help="only this backend (repeatable)")
    p.set_defaults(func=_cmd_check)

    p = sub.add_parser("platforms", help="platform presets (core counts, buffer sizes)",
                       description="List the platform presets and the platform ops tile for.")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_cmd_platforms)

    _add_plugin_commands(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run ``ascend-ops`` with ``argv`` (``sys.argv[1:]`` by default); return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        try:
            print(f"ascend-op-common {_clib.common_version()} (C ABI {_clib.common_abi()})")
        except NativeImportError as exc:
            print(f"ascend-ops: {exc}", file=sys.stderr)
            return 1
        return 0
    if args.command is None:
        parser.print_help()
        return 2
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
