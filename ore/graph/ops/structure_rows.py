"""The table's structure rows: sizes, ranks, communities, symbols, neighbours, search, context,
paths and cycles (the answers of `ore.graph.queries`, rendered by `ore.graph.render.tables`).

Apart from the judgment rows as `ore.cli.graph` is apart from `ore.cli.graph_judgment`: each
half reads a different room of the graph. `ore.graph.ops` puts both halves in its one table.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ...errors import GraphError
from .args import flag, given, need, number, some
from .op import SAFE, Answer, Op, Run, row

if TYPE_CHECKING:
    from ..graph import CodeGraph

__all__ = ["ROWS"]


def _render() -> ModuleType:
    """`ore.graph.render.tables`, imported when a query is rendered: its result types cost about
    20 ms of start-up, which `ore --list-tools` (this table's other reader) must not pay."""
    from ..render import tables

    return tables


def _neighbors(direction: str) -> Run:
    def run(g: CodeGraph, args: Mapping[str, str]) -> str:
        file = need(args, "file")
        rows = getattr(g, direction)(file, number(args, "depth", 1))[: number(args, "limit", 30)]
        return _render().neighbors_text(rows) if rows else f"no {direction} of {file}"

    return run


def _symbol(g: CodeGraph, args: Mapping[str, str]) -> str:
    name = need(args, "name")
    rows = g.symbol(name, number(args, "limit", 10))
    return _render().symbols_text(rows) if rows else f"no symbol named '{name}'"


def _search(g: CodeGraph, args: Mapping[str, str]) -> str:
    query = need(args, "query")
    rows = g.search(query, number(args, "limit", 30))
    return _render().search_text(rows) if rows else f"no line contains '{query}'"


def _context(g: CodeGraph, args: Mapping[str, str]) -> str:
    file = need(args, "file")
    raw = need(args, "line", "lines")
    try:
        lines = [int(x) for x in raw.replace(",", " ").split()]
    except ValueError:
        raise GraphError(f"'line' must be numbers separated by commas, not '{raw}'") from None
    return str(_render().context_text(g.context(file, lines, number(args, "window", 5, low=0))))


def _path(g: CodeGraph, args: Mapping[str, str]) -> str:
    a, b = need(args, "from", "a"), need(args, "to", "b")
    found = g.path(a, b)
    return _render().path_text(found) if found else f"no dependency path from {a} to {b}"


def _cycles(g: CodeGraph, args: Mapping[str, str]) -> str:
    rows = g.cycles(number(args, "limit", 10))
    return _render().cycles_text(rows) if rows else "no import cycles"


def _communities(g: CodeGraph, args: Mapping[str, str]) -> str:
    return str(_render().communities_text(g.communities()[: number(args, "limit", 10)]))


def _answer_context(g: CodeGraph, args: Mapping[str, str]) -> Any:
    file = given(args, "file")
    raw = given(args, "line", "lines")
    try:
        lines = [int(x) for x in raw.replace(",", " ").split()]
    except ValueError:
        raise GraphError(f"'line' must be numbers separated by commas, not '{raw}'") from None
    return g.context(file, lines, number(args, "window", 5, low=0))


def _answer_search(g: CodeGraph, args: Mapping[str, str]) -> Any:
    query, limit = given(args, "query"), number(args, "limit", 50)
    return g.search_by_file(query, limit) if flag(args, "by_file") else g.search(query, limit)


def _answer_neighbors(direction: str) -> Answer:
    def answer(g: CodeGraph, args: Mapping[str, str]) -> Any:
        rows = getattr(g, direction)(given(args, "file"), number(args, "depth", 1))
        return rows[: number(args, "limit", 50)]

    return answer


#: The structure rows, in the table's order.
ROWS: tuple[tuple[str, Op], ...] = (
    row(
        "stats",
        lambda g, a: _render().stats_text(g.stats()),
        answer=lambda g, a: g.stats(),
        about="Size of the indexed tree: files, import and reference edges, symbols, files per "
        "language, files skipped and why." + SAFE,
    ),
    row(
        "top-files",
        lambda g, a: _render().top_files_text(g.top_files(number(a, "limit", 15))),
        "limit",
        answer=lambda g, a: g.top_files(number(a, "limit", 20)),
        about="The most central files (weighted PageRank over import and reference edges), "
        "with language, symbols, dependents and dependencies: where to start reading an "
        "unfamiliar tree." + SAFE,
    ),
    row(
        "hits",
        lambda g, a: _render().hits_text(g.hits(number(a, "limit", 10))),
        "limit",
        answer=lambda g, a: g.hits(number(a, "limit", 20)),
        about="HITS: hubs (files that orchestrate, depending on many central files) and "
        "authorities (implementations many files depend on)." + SAFE,
    ),
    row(
        "communities",
        _communities,
        "limit",
        answer=lambda g, a: g.communities()[: some(a, "limit")],
        about="Module communities (Louvain, fixed seed): groups of files that depend on each "
        "other more than on the rest; every file is in one." + SAFE,
    ),
    row(
        "symbol",
        _symbol,
        "name",
        "limit",
        answer=lambda g, a: g.symbol(given(a, "name"), number(a, "limit", 20)),
        about="Where a name is defined (function, class, method, variable): file, lines, "
        "signature; exact matches first, then close ones (exact=false)." + SAFE,
        required=("name",),
        tool="find_symbol",
    ),
    row(
        "dependents",
        _neighbors("dependents"),
        "file",
        "depth",
        "limit",
        answer=_answer_neighbors("dependents"),
        about="The files that depend on a file (import or reference it), transitively up to "
        "depth hops: what a change to it can break." + SAFE,
        required=("file",),
    ),
    row(
        "dependencies",
        _neighbors("dependencies"),
        "file",
        "depth",
        "limit",
        answer=_answer_neighbors("dependencies"),
        about="The files a file depends on (imports or references), transitively up to depth "
        "hops." + SAFE,
        required=("file",),
    ),
    row(
        "search",
        _search,
        "query",
        "limit",
        answer=_answer_search,
        cli=("by_file",),
        about="Lines of the indexed files that contain a text (case-insensitive unless it "
        "holds a capital), file by file." + SAFE,
        required=("query",),
    ),
    row(
        "context",
        _context,
        "file",
        "line",
        "lines",
        "window",
        answer=_answer_context,
        about="The code around a line of a file of the tree (window lines on each side); "
        "only indexed files under the root can be read." + SAFE,
        required=("file", "line"),
        tool="get_context",
    ),
    row(
        "path",
        _path,
        "from",
        "to",
        "a",
        "b",
        answer=lambda g, a: g.path(given(a, "from", "a"), given(a, "to", "b")),
        about="The shortest chain of dependency edges from one file to another (null when "
        "there is none): how a file comes to depend on another." + SAFE,
        required=("from", "to"),
    ),
    row(
        "cycles",
        _cycles,
        "limit",
        answer=lambda g, a: g.cycles(
            number(a, "limit", 50), include_deferred_imports=flag(a, "include_deferred_imports")
        ),
        cli=("include_deferred_imports",),
        about="Import cycles: strongly connected files, largest first, each with one "
        "concrete cycle; only imports that run when a module is imported count, not those "
        "inside functions, under if __name__ == '__main__': or only for type checkers (if "
        "TYPE_CHECKING:)." + SAFE,
    ),
)
