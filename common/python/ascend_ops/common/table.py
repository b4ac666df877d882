"""Plain-text tables for the CLI and the benchmark reports (kept by hand: a dozen lines do not
justify a dependency such as tabulate in every inference image)."""

from __future__ import annotations

from numbers import Number
from typing import Any, List, Sequence

__all__ = ["cell", "format_table"]


def cell(value: Any, digits: int = 4) -> str:
    """Format one cell: ``-`` for None, ``digits`` significant digits for floats."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Return a table with a header rule; numbers right-aligned, text left-aligned.

    Parameters
    ----------
    headers : sequence of str
    rows : sequence of sequences
        Each as long as ``headers``.

    Returns
    -------
    str
        Lines joined by newlines, without a trailing newline.
    """
    texts: List[List[str]] = [[cell(v) for v in row] for row in rows]
    numeric = [
        bool(rows) and all(isinstance(row[i], Number) or row[i] is None for row in rows)
        for i in range(len(headers))
    ]
    widths = [max([len(h)] + [len(t[i]) for t in texts]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        parts = [v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)]
        return "  ".join(parts).rstrip()

    out = [line(list(headers)), "  ".join("-" * w for w in widths)]
    out.extend(line(t) for t in texts)
    return "\n".join(out)
