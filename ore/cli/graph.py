"""`ore graph COMMAND [--root PATH] [--json] [--limit N]`: the codebase graph from the shell.

Only click is imported here at start-up; the index, tree-sitter and networkx load inside the
command that needs them, so `ore graph --help` stays instant. Results go to stdout (one JSON
document with `--json`, a table otherwise); errors are one line on stderr with exit 1.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import click

from ..graph.ops import ARG_MIN
from .console import is_terminal, out, reported, visible
from .graph_common import answer as _answer
from .graph_common import common as _common
from .graph_common import open_root as _open
from .graph_common import show as _show
from .graph_judgment import JUDGMENT_COMMANDS, search_by_file
from .help import CONTEXT_SETTINGS

__all__ = ["graph"]


@click.group(name="graph", context_settings=CONTEXT_SETTINGS)
def graph() -> None:
    """Answer questions about a codebase: ranks, dependencies, symbols, cycles, and a
    reviewer's (duplicates, similar code, conventions, consistency, where code belongs).

    The index lives under $ORE_HOME/cache/graph and is refreshed before every answer: only files
    whose content changed are parsed again. Nothing here calls a model.

    \b
    Example:
        ore graph top-files --limit 10
        ore graph dependents ore/core.py --depth 2 --json
        git diff | ore graph duplicates --snippet -
    """


@graph.command()
@_common(None)
def stats(root: str, as_json: bool) -> None:
    """Show files, edges, symbols, languages and skipped files.

    \b
    Example:
        ore graph stats --root ~/src/project
    """
    from ..graph.render import tables

    with reported():
        s = _answer("stats", root)
        _show(as_json, s, lambda: tables.stats_text(s))


@graph.command("top-files")
@_common(20)
def top_files(root: str, as_json: bool, limit: int) -> None:
    """Rank files by weighted PageRank over import and reference edges.

    \b
    Example:
        ore graph top-files --limit 10
    """
    from ..graph.render import tables

    with reported():
        rows = _answer("top-files", root, limit=limit)
        _show(as_json, rows, lambda: tables.top_files_text(rows), "no files indexed")


@graph.command()
@_common(20)
def hits(root: str, as_json: bool, limit: int) -> None:
    """Split files into hubs (orchestrators) and authorities (implementations) with HITS.

    \b
    Example:
        ore graph hits --limit 5
    """
    from ..graph.render import tables

    with reported():
        h = _answer("hits", root, limit=limit)
        _show(as_json, h, lambda: tables.hits_text(h))


@graph.command()
@_common(None)
def communities(root: str, as_json: bool) -> None:
    """Group files into Louvain communities (fixed seed: same input, same answer).

    \b
    Example:
        ore graph communities --json
    """
    from ..graph.render import tables

    with reported():
        groups = _answer("communities", root)
        _show(as_json, groups, lambda: tables.communities_text(groups), "no files indexed")


@graph.command()
@click.argument("name")
@_common(20)
def symbol(name: str, root: str, as_json: bool, limit: int) -> None:
    """Find where NAME is defined: exact matches first, then close ones (marked ~).

    \b
    Example:
        ore graph symbol CodeGraph
    """
    from ..graph.render import tables

    with reported():
        rows = _answer("symbol", root, name=name, limit=limit)
        _show(as_json, rows, lambda: tables.symbols_text(rows), f"no symbol named '{name}'")


def _neighbors(direction: str) -> Callable[..., None]:
    def command(file: str, depth: int, root: str, as_json: bool, limit: int) -> None:
        from ..graph.render import tables

        with reported():
            rows = _answer(direction, root, file=file, depth=depth, limit=limit)
            _show(as_json, rows, lambda: tables.neighbors_text(rows), f"no {direction}")

    return command


_DEPTH = click.option(
    "--depth",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Follow edges this many hops (transitive).",
)

graph.command(
    "dependents",
    help="List the files that depend on FILE.\n\n\b\nExample:\n    ore graph dependents ore/types.py --depth 2",
)(click.argument("file")(_DEPTH(_common(50)(_neighbors("dependents")))))
graph.command(
    "dependencies",
    help="List the files FILE depends on.\n\n\b\nExample:\n    ore graph dependencies ore/cli.py",
)(click.argument("file")(_DEPTH(_common(50)(_neighbors("dependencies")))))


@graph.command()
@click.argument("query")
@click.option("--by-file", is_flag=True, help="Group the hits by file, most hits first.")
@_common(50)
def search(query: str, by_file: bool, root: str, as_json: bool, limit: int) -> None:
    """Find lines containing QUERY (case-insensitive unless QUERY has a capital).

    With --by-file, hits are grouped by file, the files with the most hits first (--json:
    [{"path", "count", "hits": [{"path", "line", "text"}]}]).

    \b
    Example:
        ore graph search "def main"
        ore graph search logger --by-file --json
    """
    from ..graph.render import tables

    with reported():
        if by_file:
            search_by_file(query, root, as_json, limit)
            return
        rows = _answer("search", root, query=query, limit=limit)
        _show(as_json, rows, lambda: tables.search_text(rows), f"no line contains '{query}'")


@graph.command()
@click.argument("file")
@click.option("--line", "lines", type=int, multiple=True, required=True, help="1-based; repeat.")
@click.option(
    "--window",
    type=click.IntRange(min=ARG_MIN["window"]),
    default=5,
    show_default=True,
    help="Lines of context on each side.",
)
@_common(None)
def context(file: str, lines: tuple[int, ...], window: int, root: str, as_json: bool) -> None:
    """Show the code around lines of FILE, overlapping windows merged.

    \b
    Example:
        ore graph context ore/core.py --line 40 --line 52 --window 3
    """
    from ..graph.render import tables

    with reported():
        ctx = _answer("context", root, file=file, line=lines, window=window)
        _show(as_json, ctx, lambda: tables.context_text(ctx))


@graph.command()
@click.argument("source")
@click.argument("target")
@_common(None)
def path(source: str, target: str, root: str, as_json: bool) -> None:
    """Show the shortest dependency path from SOURCE to TARGET.

    \b
    Example:
        ore graph path ore/cli.py ore/types.py
    """
    from ..graph.render import tables

    with reported():
        found = _answer("path", root, **{"from": source, "to": target})
        empty = f"no dependency path from {source} to {target}"  # JSON: null
        _show(as_json, found, lambda: tables.path_text(found), empty)


@graph.command()
@click.option(
    "--include-deferred-imports",
    "--include-type-imports",
    "include_deferred_imports",
    is_flag=True,
    help="Count deferred imports too: those inside functions, under `if __name__ == "
    "'__main__':` and those made only for type checkers (`if TYPE_CHECKING:`, `import type`). "
    "--include-type-imports is its old name.",
)
@_common(50)
def cycles(include_deferred_imports: bool, root: str, as_json: bool, limit: int) -> None:
    """List import cycles (strongly connected files), largest first.

    Only imports that run when a module is imported count: one inside a function (or under
    `if TYPE_CHECKING:`, or a TypeScript `import type`) is written there to avoid a cycle, so a
    loop it closes is left out unless --include-deferred-imports (each cycle then says whether
    it runs at import time: "runtime" in --json).

    \b
    Example:
        ore graph cycles --json
        ore graph cycles --include-deferred-imports
    """
    from ..graph.render import tables

    with reported():
        deferred = include_deferred_imports
        rows = _answer("cycles", root, limit=limit, include_deferred_imports=deferred)
        _show(as_json, rows, lambda: tables.cycles_text(rows), "no import cycles")


@graph.command()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["json", "graphml", "dot", "mermaid"]),
    default="json",
    show_default=True,
    help="Output format.",
)
@_common(None)
def export(fmt: str, root: str, as_json: bool) -> None:
    """Write the whole graph (nodes and weighted, typed edges) to stdout.

    \b
    Example:
        ore graph export --format dot | dot -Tsvg > graph.svg
    """
    from ..graph.render.export import export as render_export

    if as_json and fmt != "json":
        raise click.UsageError("--json goes with --format json only")
    with reported():
        doc = render_export(_open(root), fmt)
        # a document (as --json): as written in a pipe, through the one boundary at a terminal
        shown = visible(doc, keep="\n\t", as_json=fmt == "json") if is_terminal(sys.stdout) else doc
        out(shown)


for _command in JUDGMENT_COMMANDS:
    graph.add_command(_command)


if __name__ == "__main__":
    graph(prog_name="ore graph")
