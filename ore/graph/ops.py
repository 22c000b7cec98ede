"""The codebase queries as one table (name, the arguments each takes, how it runs), and
`run_query`, which answers one of them as prompt-sized text.

`run_query(root, "top-files", {"limit": "10"})` answers in a few KB at most, in the spirit of the
Ori body's codebase signature (`op="overview"`, the signature: top files, module communities, key
symbols) and its judgment operations (`duplicates`, `similar`, `conventions`, `consistent`,
`place`). The `codebase` tool (`ore.tools.codebase`) adapts this table; nothing else spells it
out. Importing this module is cheap: the graph itself (tree-sitter, networkx) loads only when a
query runs. Bad ops or arguments, a missing root or an unknown file raise `GraphError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, NamedTuple

from ..errors import GraphError

if TYPE_CHECKING:
    from .graph import CodeGraph

__all__ = ["ARG_KINDS", "MAX_CHARS", "OPS", "SNIPPET_ARG", "TOOL_MAX_TOKENS", "Op", "run_query"]

MAX_CHARS = 4000
_Run = Callable[["CodeGraph", Mapping[str, str]], str]

#: Every argument a query can take, by kind: `path` (a file, which a caller confines to the
#: root), `paths` (files or folders separated by commas, each confined alike), `word` (a name,
#: search text or a choice), `text` (code or a description, up to 8 MiB), `lines` (numbers
#: separated by commas), `number`, `flag` (true/false, yes/no, 1/0).
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
    "snippet": "text",
    "description": "text",
    "paths": "paths",
    "mode": "word",
    "topic": "word",
    "criteria": "word",
    "level": "word",
    "sort": "word",
    "language": "word",
    "min_lines": "number",
    "min_tokens": "number",
    "max_tokens": "number",
    "exclude_tests": "flag",
}
#: The argument text piped to ORE fills, for the ops that compare a snippet.
SNIPPET_ARG = "snippet"
#: The signature's budget in the tool: 4 characters or more per token, so it fits MAX_CHARS.
TOOL_MAX_TOKENS = 975


class Op(NamedTuple):
    """One query: its name, the arguments it accepts, and the function that answers it (a
    NamedTuple, not a dataclass: `--list-tools` reads this table at start-up)."""

    name: str
    args: frozenset[str]
    run: _Run


def _render() -> ModuleType:
    """`ore.graph.render.tables`, imported when a query is rendered: its result types cost about
    20 ms of start-up, which `ore --list-tools` (this table's other reader) must not pay."""
    from .render import tables

    return tables


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


def _signature(g: CodeGraph, args: Mapping[str, str]) -> str:
    """The codebase signature (`overview` is this at `standard`), sized to fit MAX_CHARS."""
    from .judgment.signature import DEFAULT_TOKENS

    level = args.get("level") or "standard"
    budget = DEFAULT_TOKENS.get(level, TOOL_MAX_TOKENS)
    budget = min(_int(args, "max_tokens", budget), TOOL_MAX_TOKENS)
    s = g.signature(level, budget)
    return f"{s.text}\n({s.tokens} of {s.max_tokens} tokens, level {s.level})"


def _flag(args: Mapping[str, str], key: str) -> bool:
    raw = args.get(key, "").casefold()
    if raw in ("", "false", "no", "0"):
        return False
    if raw in ("true", "yes", "1"):
        return True
    raise GraphError(f"'{key}' must be true or false, not '{args[key]}'")


def _paths(args: Mapping[str, str]) -> tuple[str, ...]:
    return tuple(p.strip() for p in args.get("paths", "").split(",") if p.strip())


def _snippet(args: Mapping[str, str]) -> str:
    found = args.get(SNIPPET_ARG)
    if not found:
        raise GraphError(
            "this op needs the code to compare: pipe it to ore (a file, or a diff), "
            "or give --tool-arg snippet=CODE"
        )
    return found


def _duplicates(g: CodeGraph, args: Mapping[str, str]) -> str:
    from .judgment.snippets import duplicates_in
    from .render.judgment import clones_text, snippet_matches_text

    exclude = _flag(args, "exclude_tests")
    if args.get(SNIPPET_ARG):
        for key in ("paths", "min_lines", "min_tokens"):
            if key in args:
                raise GraphError(f"'{key}' applies to clone groups, not to a snippet")
        rows = duplicates_in(
            g,
            args[SNIPPET_ARG],
            language=args.get("language") or None,
            limit=_int(args, "limit", 10),
            exclude_tests=exclude,
        )
        return (
            "code like the snippet:\n" + snippet_matches_text(rows)
            if rows
            else ("no code like the snippet (nothing scores 0.5 or more)")
        )
    groups = g.duplicates(
        min_lines=_int(args, "min_lines", 5, low=2),
        min_tokens=_int(args, "min_tokens", 50),
        paths=_paths(args),
        exclude_tests=exclude,
        limit=_int(args, "limit", 10),
    )
    return clones_text(groups)


def _similar(g: CodeGraph, args: Mapping[str, str]) -> str:
    from .judgment.snippets import one_snippet
    from .render.judgment import similar_text

    name, snippet, language = args.get("name") or None, args.get(SNIPPET_ARG), None
    if snippet:
        if name:
            raise GraphError("give a name or a snippet, not both")
        snippet, language = one_snippet(snippet, args.get("language") or None)
    elif name is None:
        raise GraphError("this op needs 'name=...' or the code to compare (piped, or snippet=)")
    rows = g.similar(
        name,
        snippet=snippet,
        mode=args.get("mode") or "name",
        language=language or args.get("language") or None,
        limit=_int(args, "limit", 10),
    )
    return similar_text(rows)


def _conventions(g: CodeGraph, args: Mapping[str, str]) -> str:
    from .render.judgment import conventions_text

    return conventions_text(g.conventions(args.get("topic") or None, paths=_paths(args)))


def _consistent(g: CodeGraph, args: Mapping[str, str]) -> str:
    from .judgment.snippets import one_snippet
    from .render.judgment import consistency_text

    snippet, language = one_snippet(_snippet(args), args.get("language") or None)
    found = g.consistent(
        snippet, paths=_paths(args), language=language, criteria=args.get("criteria") or "all"
    )
    return consistency_text(found)


def _place(g: CodeGraph, args: Mapping[str, str]) -> str:
    from .judgment.snippets import one_snippet
    from .render.judgment import placement_text

    description, snippet = args.get("description", ""), args.get(SNIPPET_ARG)
    if snippet:
        snippet = one_snippet(snippet)[0]
    elif not description.strip():
        raise GraphError("this op needs 'description=...' (what the new code does) or a snippet")
    return placement_text(g.place(description, snippet=snippet, limit=_int(args, "limit", 5)))


def _files(g: CodeGraph, args: Mapping[str, str]) -> str:
    from .render.judgment import files_text

    rows = g.list_files(
        language=args.get("language") or None,
        sort=args.get("sort") or "rank",
        limit=_int(args, "limit", 30),
    )
    return files_text(rows) if rows else "no files indexed"


def _neighbors(direction: str) -> _Run:
    def run(g: CodeGraph, args: Mapping[str, str]) -> str:
        file = _need(args, "file")
        rows = getattr(g, direction)(file, _int(args, "depth", 1))[: _int(args, "limit", 30)]
        return _render().neighbors_text(rows) if rows else f"no {direction} of {file}"

    return run


def _symbol(g: CodeGraph, args: Mapping[str, str]) -> str:
    name = _need(args, "name")
    rows = g.symbol(name, _int(args, "limit", 10))
    return _render().symbols_text(rows) if rows else f"no symbol named '{name}'"


def _search(g: CodeGraph, args: Mapping[str, str]) -> str:
    query = _need(args, "query")
    rows = g.search(query, _int(args, "limit", 30))
    return _render().search_text(rows) if rows else f"no line contains '{query}'"


def _context(g: CodeGraph, args: Mapping[str, str]) -> str:
    file = _need(args, "file")
    raw = _need(args, "line", "lines")
    try:
        lines = [int(x) for x in raw.replace(",", " ").split()]
    except ValueError:
        raise GraphError(f"'line' must be numbers separated by commas, not '{raw}'") from None
    return str(_render().context_text(g.context(file, lines, _int(args, "window", 5, low=0))))


def _path(g: CodeGraph, args: Mapping[str, str]) -> str:
    a, b = _need(args, "from", "a"), _need(args, "to", "b")
    found = g.path(a, b)
    return _render().path_text(found) if found else f"no dependency path from {a} to {b}"


def _cycles(g: CodeGraph, args: Mapping[str, str]) -> str:
    rows = g.cycles(_int(args, "limit", 10))
    return _render().cycles_text(rows) if rows else "no import cycles"


def _communities(g: CodeGraph, args: Mapping[str, str]) -> str:
    return str(_render().communities_text(g.communities()[: _int(args, "limit", 10)]))


def _op(name: str, run: _Run, *args: str) -> tuple[str, Op]:
    return name, Op(name, frozenset(args), run)


OPS: Mapping[str, Op] = dict(
    [
        _op("overview", _signature, "level", "max_tokens"),
        _op("stats", lambda g, a: _render().stats_text(g.stats())),
        _op(
            "top-files",
            lambda g, a: _render().top_files_text(g.top_files(_int(a, "limit", 15))),
            "limit",
        ),
        _op("hits", lambda g, a: _render().hits_text(g.hits(_int(a, "limit", 10))), "limit"),
        _op("communities", _communities, "limit"),
        _op("symbol", _symbol, "name", "limit"),
        _op("dependents", _neighbors("dependents"), "file", "depth", "limit"),
        _op("dependencies", _neighbors("dependencies"), "file", "depth", "limit"),
        _op("search", _search, "query", "limit"),
        _op("context", _context, "file", "line", "lines", "window"),
        _op("path", _path, "from", "to", "a", "b"),
        _op("cycles", _cycles, "limit"),
        _op(
            "duplicates",
            _duplicates,
            "snippet",
            "paths",
            "min_lines",
            "min_tokens",
            "exclude_tests",
            "language",
            "limit",
        ),
        _op("similar", _similar, "name", "snippet", "mode", "language", "limit"),
        _op("conventions", _conventions, "topic", "paths"),
        _op("consistent", _consistent, "snippet", "paths", "language", "criteria"),
        _op("place", _place, "description", "snippet", "limit"),
        _op("signature", _signature, "level", "max_tokens"),
        _op("files", _files, "language", "sort", "limit"),
    ]
)
