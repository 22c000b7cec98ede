"""The codebase queries as one table (name, the arguments each takes, how it runs), and
`run_query`, which answers one of them as prompt-sized text.

`run_query(root, "top-files", {"limit": "10"})` answers in a few KB at most, in the spirit of the
Ori body's codebase signature (`op="overview"`: top files, module communities, key symbols). The
`codebase` tool (`ore.tools.codebase`) adapts this table; nothing else spells it out. Importing
this module is cheap: the graph itself (tree-sitter, networkx) loads only when a query runs. Bad
ops or arguments, a missing root or an unknown file raise `GraphError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import GraphError
from . import render

if TYPE_CHECKING:
    from .graph import CodeGraph

__all__ = ["ARG_KINDS", "MAX_CHARS", "OPS", "Op", "run_query"]

MAX_CHARS = 4000
_Run = Callable[["CodeGraph", Mapping[str, str]], str]

#: Every argument a query can take, by kind: `path` (a file, which a caller confines to the
#: root), `word` (a name or search text), `lines` (numbers separated by commas), `number`.
ARG_KINDS: Mapping[str, str] = {
    "file": "path",
    "from": "path",
    "to": "path",
    "a": "path",
    "b": "path",
    "name": "word",
    "query": "word",
    "line": "lines",
    "lines": "lines",
    "limit": "number",
    "depth": "number",
    "window": "number",
}


@dataclass(frozen=True, slots=True)
class Op:
    """One query: its name, the arguments it accepts, and the function that answers it."""

    name: str
    args: frozenset[str]
    run: _Run


def run_query(root: Path, op: str, args: Mapping[str, str]) -> str:
    """Run one query (`op` in OPS) on the graph of `root` and render it for a prompt."""
    spec = OPS.get(op)
    if spec is None:
        raise GraphError(f"unknown codebase op '{op}'; use one of {', '.join(OPS)}")
    unknown = sorted(set(args) - spec.args)
    if unknown:
        allowed = ", ".join(sorted(spec.args)) or "none"
        raise GraphError(f"op '{op}' takes no argument '{unknown[0]}' (takes: {allowed})")
    from .graph import open_graph

    text = spec.run(open_graph(root), args)
    if len(text) > MAX_CHARS:
        cut = text.rfind("\n", 0, MAX_CHARS - 40)
        text = text[: cut if cut > 0 else MAX_CHARS - 40] + "\n… (truncated; narrow the query)"
    return text


def _int(args: Mapping[str, str], key: str, default: int, low: int = 1) -> int:
    raw = args.get(key)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise GraphError(f"'{key}' must be a whole number, not '{raw}'") from None
    if value < low:
        raise GraphError(f"'{key}' must be {low} or more, not {value}")
    return value


def _need(args: Mapping[str, str], *keys: str) -> str:
    for key in keys:
        if args.get(key):
            return args[key]
    raise GraphError(f"this op needs '{keys[0]}=...'")


def _overview(g: CodeGraph, args: Mapping[str, str]) -> str:
    s = g.stats()
    langs = ", ".join(f"{k} {v}" for k, v in s.languages.items()) or "none"
    out = [f"{s.files} files ({langs}), {s.import_edges} import edges, {s.symbols} symbols"]
    top = g.top_files(_int(args, "limit", 10))
    out.append("central files (PageRank):")
    for r in top:
        record = g.index.files[r.path]
        names = [
            x.name
            for x in record.symbols
            if x.kind in ("class", "interface", "function") and not x.name.startswith("_")
        ]
        keys = ", ".join(names[:6]) + (" …" if len(names) > 6 else "")
        out.append(f"  {r.path} ({r.dependents} dependents){': ' + keys if keys else ''}")
    groups = [c for c in g.communities() if len(c.files) > 1][:6]
    if groups:
        out.append("modules (Louvain communities):")
        for c in groups:
            shown = ", ".join(c.files[:5]) + (f" +{len(c.files) - 5}" if len(c.files) > 5 else "")
            out.append(f"  [{c.id}] {shown}")
    cycles = g.cycles(3)
    if cycles:
        out.append("import cycles: " + "; ".join(" -> ".join(c.cycle) for c in cycles))
    return "\n".join(out)


def _neighbors(direction: str) -> _Run:
    def run(g: CodeGraph, args: Mapping[str, str]) -> str:
        file = _need(args, "file")
        rows = getattr(g, direction)(file, _int(args, "depth", 1))[: _int(args, "limit", 30)]
        return render.neighbors_text(rows) if rows else f"no {direction} of {file}"

    return run


def _symbol(g: CodeGraph, args: Mapping[str, str]) -> str:
    name = _need(args, "name")
    rows = g.symbol(name, _int(args, "limit", 10))
    return render.symbols_text(rows) if rows else f"no symbol named '{name}'"


def _search(g: CodeGraph, args: Mapping[str, str]) -> str:
    query = _need(args, "query")
    rows = g.search(query, _int(args, "limit", 30))
    return render.search_text(rows) if rows else f"no line contains '{query}'"


def _context(g: CodeGraph, args: Mapping[str, str]) -> str:
    file = _need(args, "file")
    raw = _need(args, "line", "lines")
    try:
        lines = [int(x) for x in raw.replace(",", " ").split()]
    except ValueError:
        raise GraphError(f"'line' must be numbers separated by commas, not '{raw}'") from None
    return render.context_text(g.context(file, lines, _int(args, "window", 5, low=0)))


def _path(g: CodeGraph, args: Mapping[str, str]) -> str:
    a, b = _need(args, "from", "a"), _need(args, "to", "b")
    found = g.path(a, b)
    return render.path_text(found) if found else f"no dependency path from {a} to {b}"


def _cycles(g: CodeGraph, args: Mapping[str, str]) -> str:
    rows = g.cycles(_int(args, "limit", 10))
    return render.cycles_text(rows) if rows else "no import cycles"


def _communities(g: CodeGraph, args: Mapping[str, str]) -> str:
    return render.communities_text(g.communities()[: _int(args, "limit", 10)])


def _op(name: str, run: _Run, *args: str) -> tuple[str, Op]:
    return name, Op(name, frozenset(args), run)


OPS: Mapping[str, Op] = dict(
    [
        _op("overview", _overview, "limit"),
        _op("stats", lambda g, a: render.stats_text(g.stats())),
        _op(
            "top-files",
            lambda g, a: render.top_files_text(g.top_files(_int(a, "limit", 15))),
            "limit",
        ),
        _op("hits", lambda g, a: render.hits_text(g.hits(_int(a, "limit", 10))), "limit"),
        _op("communities", _communities, "limit"),
        _op("symbol", _symbol, "name", "limit"),
        _op("dependents", _neighbors("dependents"), "file", "depth", "limit"),
        _op("dependencies", _neighbors("dependencies"), "file", "depth", "limit"),
        _op("search", _search, "query", "limit"),
        _op("context", _context, "file", "line", "lines", "window"),
        _op("path", _path, "from", "to", "a", "b"),
        _op("cycles", _cycles, "limit"),
    ]
)
