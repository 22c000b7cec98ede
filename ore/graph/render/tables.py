"""Compact tables for people (`ore graph ...` without `--json`).

The text's own layout (line breaks, indents, columns) is the only layout in it: every name
placed in it, a file's above all, goes through `cell` (`plain_name`), so a line break, tab or
other control character a name holds is shown `\\x0a` on the name's one line, in a table or
not. The terminal boundary (`ore.cli.console.visible`, which keeps line breaks and tabs for the
layout) could not tell them from the layout's own any more. Code lines (search hits, context)
are shown as they are: they hold no line break, and the boundary makes the rest visible.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..names import plain_name
from ..results import (
    Community,
    Context,
    Cycle,
    DependencyPath,
    FileScore,
    GraphStats,
    Hits,
    Neighbor,
    SearchHit,
    SymbolMatch,
)

__all__ = [
    "cell",
    "communities_text",
    "context_text",
    "cycles_text",
    "hits_text",
    "neighbors_text",
    "path_text",
    "search_text",
    "stats_text",
    "symbols_text",
    "table",
    "top_files_text",
]


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Left-aligned columns (numbers right-aligned), two spaces apart."""
    cells = [[cell(v) for v in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    numeric = [all(isinstance(row[i], int | float) for row in rows) for i in range(len(headers))]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    return "\n".join([line(list(headers)), *(line(r) for r in cells)])


def cell(value: object) -> str:
    """A value on one line: a name's line break or tab would split its row or line
    (`plain_name`); the one way a name enters any text here."""
    if isinstance(value, float):
        return f"{value:.4f}"
    return plain_name(str(value))


def stats_text(s: GraphStats) -> str:
    skipped = ", ".join(f"{k} {v}" for k, v in s.skipped.items()) or "none"
    languages = ", ".join(f"{k} {v}" for k, v in s.languages.items()) or "none"
    return "\n".join(
        [
            f"root            {cell(s.root)}",
            f"files           {s.files} ({languages})",
            f"edges           {s.edges} ({s.import_edges} import, {s.reference_edges} reference)",
            f"symbols         {s.symbols}",
            f"skipped         {skipped}",
            f"parse errors    {s.parse_errors} files (indexed what parsed)",
            f"non-UTF-8       {s.non_utf8} files",
            f"external deps   {s.external_imports} distinct modules/packages",
            f"re-parsed now   {s.reparsed} files",
        ]
    )


def top_files_text(rows: Sequence[FileScore]) -> str:
    return table(
        ["score", "path", "symbols", "dependents", "dependencies"],
        [(r.score, r.path, r.symbols, r.dependents, r.dependencies) for r in rows],
    )


def hits_text(h: Hits) -> str:
    if not h.hubs:
        return "no files indexed"
    hubs = table(["hub", "path"], [(s.score, s.path) for s in h.hubs])
    authorities = table(["authority", "path"], [(s.score, s.path) for s in h.authorities])
    return hubs + "\n\n" + authorities


def communities_text(groups: Sequence[Community]) -> str:
    out = []
    for group in groups:
        out.append(f"community {group.id} ({len(group.files)} files)")
        out += [f"  {cell(path)}" for path in group.files]
    return "\n".join(out)


def symbols_text(rows: Sequence[SymbolMatch]) -> str:
    return table(
        ["name", "kind", "location", "signature"],
        [
            (r.name + ("" if r.exact else " ~"), r.kind, f"{r.path}:{r.line}", r.signature)
            for r in rows
        ],
    )


def neighbors_text(rows: Sequence[Neighbor]) -> str:
    return table(
        ["weight", "depth", "path", "kinds"],
        [(r.weight, r.depth, r.path, ",".join(r.kinds)) for r in rows],
    )


def search_text(rows: Sequence[SearchHit]) -> str:
    out: list[str] = []
    current = None
    for hit in rows:
        if hit.path != current:
            if current is not None:
                out.append("")
            out.append(cell(hit.path))
            current = hit.path
        out.append(f"  {hit.line:>5}: {hit.text}")
    return "\n".join(out)


def context_text(ctx: Context) -> str:
    out = []
    for chunk in ctx.chunks:
        out.append(f"{cell(ctx.path)}:{chunk.start}-{chunk.end}")
        for n, text in enumerate(chunk.text.split("\n"), chunk.start):
            out.append(f"{n:>6}  {text}")
    return "\n".join(out)


def path_text(p: DependencyPath) -> str:
    return " -> ".join(map(cell, p.files))


def cycles_text(rows: Sequence[Cycle]) -> str:
    out = []
    for n, c in enumerate(rows, 1):
        how = "" if c.runtime else ", only through deferred imports"
        out.append(f"cycle {n} ({len(c.files)} files{how}): " + " -> ".join(map(cell, c.cycle)))
    return "\n".join(out)
