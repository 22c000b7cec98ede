"""The codebase queries as one table (name, the arguments each takes, how it runs), and
`run_query`, which answers one of them as prompt-sized text.

Each op also carries what the other two readers need: `data`, the structured answer, equal to
`ore graph NAME --json` for the same arguments (the CLI's defaults); `about`, what it answers,
written for a model deciding whether to call it; `required`; and `tool`, its name as an MCP tool
(`ore.mcp` derives every tool, input schema and description from this table; "" is no tool).

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
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import GraphError

if TYPE_CHECKING:
    from .graph import CodeGraph

__all__ = [
    "ARG_ABOUT",
    "ARG_CHOICES",
    "ARG_KINDS",
    "ARG_MIN",
    "MAX_CHARS",
    "OPS",
    "SNIPPET_ARG",
    "TOOL_MAX_TOKENS",
    "Op",
    "run_query",
    "to_data",
]

MAX_CHARS = 4000
_Run = Callable[["CodeGraph", Mapping[str, str]], str]
_Data = Callable[["CodeGraph", Mapping[str, str]], Any]
_Answer = Callable[["CodeGraph", Mapping[str, str]], Any]

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
#: What each argument means, for a model filling it in (an MCP tool's input schema).
ARG_ABOUT: Mapping[str, str] = {
    "file": "A file of the tree: its path from the root, or a unique end of it (models.py).",
    "from": "The file the dependency path starts from (path from the root).",
    "to": "The file the dependency path ends at (path from the root).",
    "a": "The file the dependency path starts from (same as 'from').",
    "b": "The file the dependency path ends at (same as 'to').",
    "name": "An identifier: a function, class, method or variable name.",
    "query": "The text to find (case-insensitive unless it holds a capital).",
    "line": "A line number (1-based).",
    "lines": "Line numbers (1-based).",
    "limit": "At most this many results.",
    "depth": "Follow dependency edges this many hops (transitive).",
    "window": "Lines of context on each side.",
    "snippet": "Code (or a unified diff, standing for the code it adds) to compare with the tree.",
    "description": "What the new code does, in words.",
    "paths": "Only files under these paths (files or folders, from the root).",
    "mode": "Compare identifier words (name), parameter shape (signature) or syntax tree (shape).",
    "topic": "One topic of conventions; none gives a short summary of every topic.",
    "criteria": "What to check the snippet against.",
    "level": "How much to say: token budgets 300, 1000, 2000, 4000.",
    "sort": "Order: PageRank, size (largest first) or path.",
    "language": "A language (of the snippet, or of the files to list).",
    "min_lines": "Clones spanning at least this many lines.",
    "min_tokens": "Clones of at least this many tokens.",
    "max_tokens": "Never more than this many tokens.",
    "exclude_tests": "Leave out test files and generated code.",
}
#: The values a `word` argument takes, when it is a choice (`ore graph`'s click choices, held
#: equal by tests/mcp/test_mcp_table.py).
ARG_CHOICES: Mapping[str, tuple[str, ...]] = {
    "mode": ("name", "signature", "shape"),
    "topic": ("errors", "logging", "imports", "naming", "async", "tests"),
    "criteria": ("all", "naming", "structure", "imports"),
    "level": ("lean", "standard", "deep", "max"),
    "sort": ("rank", "size", "path"),
    "language": ("python", "javascript", "typescript", "tsx", "go", "rust"),
}
#: The least a `number` argument may be (1 when not listed).
ARG_MIN: Mapping[str, int] = {"window": 0, "min_lines": 2}
#: The argument text piped to ORE fills, for the ops that compare a snippet.
SNIPPET_ARG = "snippet"
#: The signature's budget in the tool: 4 characters or more per token, so it fits MAX_CHARS.
TOOL_MAX_TOKENS = 975


class Op(NamedTuple):
    """One query: its name, the arguments it accepts, and the function that answers it (a
    NamedTuple, not a dataclass: `--list-tools` reads this table at start-up); `answer` gives
    the result objects `ore graph NAME` prints (a table, or `--json` through `to_data`), `data`
    that JSON document itself, `about` says what for, `tool` is its MCP name, `cli` the
    arguments only `ore graph` gives (options no tool offers)."""

    name: str
    args: frozenset[str]
    run: _Run
    data: _Data | None = None
    about: str = ""
    required: tuple[str, ...] = ()
    tool: str = ""
    answer: _Answer | None = None
    cli: frozenset[str] = frozenset()


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


def _given(args: Mapping[str, str], *keys: str) -> str:
    """The first of `keys` given, even empty: the graph says what is wrong with an empty one
    (`ore graph symbol ""` answers, as it always has)."""
    for key in keys:
        if key in args:
            return args[key]
    raise GraphError(f"this op needs '{keys[0]}=...'")


def _flag(args: Mapping[str, str], key: str) -> bool:
    raw = args.get(key, "").casefold()
    if raw in ("", "false", "no", "0"):
        return False
    if raw in ("true", "yes", "1"):
        return True
    raise GraphError(f"'{key}' must be true or false, not '{args[key]}'")


def _paths(args: Mapping[str, str]) -> tuple[str, ...]:
    """Paths separated by commas, or by NUL (`ore graph`'s: a path may hold a comma, never a
    NUL), kept as given then."""
    raw = args.get("paths", "")
    if "\0" in raw:
        return tuple(p for p in raw.split("\0") if p)
    return tuple(p.strip() for p in raw.split(",") if p.strip())


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
        min_tokens=_int(args, "min_tokens", 15),
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


def to_data(found: Any) -> Any:
    """An answer as its JSON document: a result's `to_dict()`, a list of them as a list, None
    as null (the one conversion behind `Op.data`, `ore graph --json` and the MCP tools)."""
    if found is None:
        return None
    if isinstance(found, list):
        return [r.to_dict() for r in found]
    return found.to_dict()


def _some(args: Mapping[str, str], key: str) -> int | None:
    """A limit the CLI leaves open by default (every result)."""
    return _int(args, key, 0) or None


def _words(args: Mapping[str, str], key: str) -> tuple[str, ...]:
    return tuple(w for w in args.get(key, "").split(",") if w)


def _answer_duplicates(g: CodeGraph, args: Mapping[str, str]) -> Any:
    exclude = _flag(args, "exclude_tests")
    if args.get(SNIPPET_ARG) is not None:
        for key in ("paths", "min_lines", "min_tokens", "kinds"):
            if key in args:
                raise GraphError(f"'{key}' applies to clone groups, not to a snippet")
        from .judgment.snippets import duplicates_in

        return duplicates_in(
            g,
            args[SNIPPET_ARG],
            language=args.get("language") or None,
            name=args.get("snippet_name", ""),
            limit=_int(args, "limit", 10),
            exclude_tests=exclude,
        )
    return g.duplicates(
        min_lines=_int(args, "min_lines", 5, low=2),
        min_tokens=_int(args, "min_tokens", 15),
        paths=_paths(args),
        exclude_tests=exclude,
        kinds=_words(args, "kinds") or ("exact", "renamed", "structural"),
        limit=_some(args, "limit"),
    )


def _answer_similar(g: CodeGraph, args: Mapping[str, str]) -> Any:
    from .judgment.snippets import one_snippet

    name, snippet, language = args.get("name"), args.get(SNIPPET_ARG), None
    if snippet is not None:
        if name is not None:
            raise GraphError("give a name or a snippet, not both")
        found = one_snippet(snippet, args.get("language") or None, args.get("snippet_name", ""))
        snippet, language = found
    elif name is None:
        raise GraphError("this op needs 'name=...' or a snippet")
    return g.similar(
        name,
        snippet=snippet,
        mode=args.get("mode") or "name",
        language=language or args.get("language") or None,
        limit=_int(args, "limit", 10),
        include_context=_flag(args, "include_context"),
    )


def _answer_consistent(g: CodeGraph, args: Mapping[str, str]) -> Any:
    from .judgment.snippets import one_snippet

    if args.get(SNIPPET_ARG) is None:
        _snippet(args)  # the error that says how to give one
    snippet, language = one_snippet(
        args[SNIPPET_ARG], args.get("language") or None, args.get("snippet_name", "")
    )
    return g.consistent(
        snippet,
        paths=_paths(args),
        language=language,
        criteria=args.get("criteria") or "all",
        include_context=_flag(args, "include_context"),
    )


def _answer_place(g: CodeGraph, args: Mapping[str, str]) -> Any:
    from .judgment.snippets import one_snippet

    description, snippet = args.get("description", ""), args.get(SNIPPET_ARG)
    if snippet is not None:
        snippet = one_snippet(snippet, name=args.get("snippet_name", ""))[0]
    elif "description" not in args:
        raise GraphError("this op needs 'description=...' (what the new code does) or a snippet")
    return g.place(
        description,
        snippet=snippet,
        limit=_int(args, "limit", 5),
        include_context=_flag(args, "include_context"),
    )


def _answer_context(g: CodeGraph, args: Mapping[str, str]) -> Any:
    file = _given(args, "file")
    raw = _given(args, "line", "lines")
    try:
        lines = [int(x) for x in raw.replace(",", " ").split()]
    except ValueError:
        raise GraphError(f"'line' must be numbers separated by commas, not '{raw}'") from None
    return g.context(file, lines, _int(args, "window", 5, low=0))


def _answer_search(g: CodeGraph, args: Mapping[str, str]) -> Any:
    query, limit = _given(args, "query"), _int(args, "limit", 50)
    return g.search_by_file(query, limit) if _flag(args, "by_file") else g.search(query, limit)


def _answer_neighbors(direction: str) -> _Answer:
    def answer(g: CodeGraph, args: Mapping[str, str]) -> Any:
        rows = getattr(g, direction)(_given(args, "file"), _int(args, "depth", 1))
        return rows[: _int(args, "limit", 50)]

    return answer


def _data(answer: _Answer) -> _Data:
    return lambda g, args: to_data(answer(g, args))


def _op(
    name: str,
    run: _Run,
    *args: str,
    answer: _Answer | None = None,
    about: str = "",
    required: tuple[str, ...] = (),
    tool: str | None = None,
    cli: tuple[str, ...] = (),
) -> tuple[str, Op]:
    mcp_name = name.replace("-", "_") if tool is None else tool
    data = None if answer is None else _data(answer)
    op = Op(name, frozenset(args), run, data, about, required, mcp_name, answer, frozenset(cli))
    return name, op


_SAFE = " Read-only: answered from the index, no model is called and nothing is run."

OPS: Mapping[str, Op] = dict(
    [
        _op("overview", _signature, "level", "max_tokens", tool=""),
        _op(
            "stats",
            lambda g, a: _render().stats_text(g.stats()),
            answer=lambda g, a: g.stats(),
            about="Size of the indexed tree: files, import and reference edges, symbols, files per "
            "language, files skipped and why." + _SAFE,
        ),
        _op(
            "top-files",
            lambda g, a: _render().top_files_text(g.top_files(_int(a, "limit", 15))),
            "limit",
            answer=lambda g, a: g.top_files(_int(a, "limit", 20)),
            about="The most central files (weighted PageRank over import and reference edges), "
            "with language, symbols, dependents and dependencies: where to start reading an "
            "unfamiliar tree." + _SAFE,
        ),
        _op(
            "hits",
            lambda g, a: _render().hits_text(g.hits(_int(a, "limit", 10))),
            "limit",
            answer=lambda g, a: g.hits(_int(a, "limit", 20)),
            about="HITS: hubs (files that orchestrate, depending on many central files) and "
            "authorities (implementations many files depend on)." + _SAFE,
        ),
        _op(
            "communities",
            _communities,
            "limit",
            answer=lambda g, a: g.communities()[: _some(a, "limit")],
            about="Module communities (Louvain, fixed seed): groups of files that depend on each "
            "other more than on the rest; every file is in one." + _SAFE,
        ),
        _op(
            "symbol",
            _symbol,
            "name",
            "limit",
            answer=lambda g, a: g.symbol(_given(a, "name"), _int(a, "limit", 20)),
            about="Where a name is defined (function, class, method, variable): file, lines, "
            "signature; exact matches first, then close ones (exact=false)." + _SAFE,
            required=("name",),
            tool="find_symbol",
        ),
        _op(
            "dependents",
            _neighbors("dependents"),
            "file",
            "depth",
            "limit",
            answer=_answer_neighbors("dependents"),
            about="The files that depend on a file (import or reference it), transitively up to "
            "depth hops: what a change to it can break." + _SAFE,
            required=("file",),
        ),
        _op(
            "dependencies",
            _neighbors("dependencies"),
            "file",
            "depth",
            "limit",
            answer=_answer_neighbors("dependencies"),
            about="The files a file depends on (imports or references), transitively up to depth "
            "hops." + _SAFE,
            required=("file",),
        ),
        _op(
            "search",
            _search,
            "query",
            "limit",
            answer=_answer_search,
            cli=("by_file",),
            about="Lines of the indexed files that contain a text (case-insensitive unless it "
            "holds a capital), file by file." + _SAFE,
            required=("query",),
        ),
        _op(
            "context",
            _context,
            "file",
            "line",
            "lines",
            "window",
            answer=_answer_context,
            about="The code around a line of a file of the tree (window lines on each side); "
            "only indexed files under the root can be read." + _SAFE,
            required=("file", "line"),
            tool="get_context",
        ),
        _op(
            "path",
            _path,
            "from",
            "to",
            "a",
            "b",
            answer=lambda g, a: g.path(_given(a, "from", "a"), _given(a, "to", "b")),
            about="The shortest chain of dependency edges from one file to another (null when "
            "there is none): how a file comes to depend on another." + _SAFE,
            required=("from", "to"),
        ),
        _op(
            "cycles",
            _cycles,
            "limit",
            answer=lambda g, a: g.cycles(_int(a, "limit", 50)),
            about="Import cycles: strongly connected files, largest first, each with one "
            "concrete cycle." + _SAFE,
        ),
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
            answer=_answer_duplicates,
            cli=("kinds", "snippet_name"),
            about="Duplicated code. With a snippet (code you are about to write, or a diff): "
            "where code like it already exists, best first with a score in [0, 1], so you can "
            "reuse it. Without: clone groups of the tree (exact, renamed, structural), largest "
            "first." + _SAFE,
        ),
        _op(
            "similar",
            _similar,
            "name",
            "snippet",
            "mode",
            "language",
            "limit",
            answer=_answer_similar,
            cli=("include_context", "snippet_name"),
            about="Definitions like a name (shared identifier words, verbs folded: get ~ fetch) "
            "or like a snippet (by signature or syntax shape), each with a score and why. Give "
            "name or snippet." + _SAFE,
        ),
        _op(
            "conventions",
            _conventions,
            "topic",
            "paths",
            answer=lambda g, a: g.conventions(
                a.get("topic") or None,
                paths=_paths(a),
                include_context=_flag(a, "include_context"),
            ),
            cli=("include_context",),
            about="The house conventions (errors, logging, imports, naming, async, tests): "
            "recurring patterns of the central files with counts, shares and an example each; "
            "follow them in new code." + _SAFE,
        ),
        _op(
            "consistent",
            _consistent,
            "snippet",
            "paths",
            "language",
            "criteria",
            answer=_answer_consistent,
            cli=("include_context", "snippet_name"),
            about="How far a snippet strays from the house conventions (0 consistent, 1 against "
            "every one), with each concrete deviation: check new code before proposing it." + _SAFE,
            required=("snippet",),
        ),
        _op(
            "place",
            _place,
            "description",
            "snippet",
            "limit",
            answer=_answer_place,
            cli=("include_context", "snippet_name"),
            about="Where new code belongs: module communities and files ranked for a "
            "description (and optionally the code), each with the names and terms it shares."
            + _SAFE,
            required=("description",),
        ),
        _op(
            "signature",
            _signature,
            "level",
            "max_tokens",
            answer=lambda g, a: g.signature(a.get("level") or "standard", _some(a, "max_tokens")),
            about="The codebase signature: a compact picture of the tree (central files and "
            "their public names, communities, key symbols, dependency patterns, conventions) "
            "within a token budget. Call it first on an unfamiliar tree." + _SAFE,
        ),
        _op(
            "files",
            _files,
            "language",
            "sort",
            "limit",
            answer=lambda g, a: g.list_files(
                language=a.get("language") or None,
                sort=a.get("sort") or "rank",
                limit=_some(a, "limit"),
            ),
            about="The indexed files with language, size, lines, symbols and PageRank score, by "
            "rank, size or path." + _SAFE,
        ),
    ]
)
