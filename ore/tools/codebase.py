"""The `codebase` tool: one query on the code graph of its root, as compact text for a prompt.

Its routing hints send structural questions ("what depends on X", "where is X defined", "most
important files") to it, with the query's arguments taken from the prompt; a routed call can set
`op` and the query's own arguments, never `root`. The graph package (tree-sitter, networkx) is
imported only when the tool runs, so listing tools never pays for it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from ..errors import GraphError
from ..graph.ops import ARG_KINDS, MAX_CHARS, OPS, run_query
from ..types import ToolResult
from .base import PATH_TOKEN, Tool, failer, inside_root, tool_root

__all__ = ["CODEBASE_HINTS", "CODEBASE_OPS", "codebase_tool"]

#: The queries `codebase` answers: the graph's own table (`ore.graph.ops.OPS`).
CODEBASE_OPS = tuple(OPS)
#: Arguments naming a file: each must resolve inside the root before the graph is asked.
_FILE_ARGS = tuple(k for k, kind in ARG_KINDS.items() if kind == "path")
_ARG_SCHEMAS: Mapping[str, dict[str, Any]] = {
    "path": {"type": "string", "minLength": 1, "maxLength": 4096},
    "word": {"type": "string", "minLength": 1, "maxLength": 200},
    "lines": {"type": "string", "pattern": "^[0-9][0-9, ]{0,199}$"},
    "number": {"type": "string", "pattern": "^[0-9]{1,6}$"},
}
_CODEBASE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "op": {"type": "string", "enum": list(CODEBASE_OPS)},
        "root": {"type": "string", "minLength": 1},
        **{name: _ARG_SCHEMAS[kind] for name, kind in ARG_KINDS.items()},
    },
    "additionalProperties": False,
}


class _Rule(NamedTuple):
    """Hint phrases that route to one codebase op, and the argument a prompt supplies for it
    (the words in a hint's `...` gap, else the words right after the hint)."""

    op: str
    hints: tuple[str, ...]
    arg: str | None = None


_CODEBASE_RULES = (
    _Rule(
        "dependents",
        (
            "what depends on",
            "which files depend on",
            "what files depend on",
            "which modules depend on",
            "who depends on",
            "who imports",
            "which files import",
            "what files import",
            "which modules import",
            "dependents of",
            "importers of",
        ),
        "file",
    ),
    _Rule(
        "dependencies",
        (
            "dependencies of",
            "what does ... depend on",
            "what does ... import",
            "which files does ... import",
            "what is imported by",
            "imports of",
        ),
        "file",
    ),
    _Rule(
        "symbol",
        (
            "where is ... defined",
            "where's ... defined",
            "where is ... declared",
            "where is ... implemented",
            "where are ... defined",
            "find the definition of",
            "where is the definition of",
            "go to the definition of",
            "go to definition of",
            "which file defines",
            "what file defines",
            "find symbol",
            "find the symbol",
        ),
        "name",
    ),
    _Rule(
        "search",
        (
            "search the code for",
            "search the codebase for",
            "grep the code for",
            "grep the codebase for",
            "find usages of",
            "usages of",
            "where is ... used",
            "where is ... called",
            "who calls",
            "callers of",
        ),
        "query",
    ),
    _Rule(
        "path",
        ("dependency path", "import path", "import chain", "dependency chain"),
        "from-to",
    ),
    _Rule(
        "top-files",
        (
            "most important files",
            "important files",
            "key files",
            "central files",
            "most central files",
            "core files",
            "main files",
            "top files",
            "which files matter",
            "files that matter",
        ),
    ),
    _Rule(
        "overview",
        (
            "codebase overview",
            "project overview",
            "overview of the codebase",
            "overview of this codebase",
            "overview of the code",
            "overview of this code",
            "overview of the project",
            "overview of this project",
            "codebase structure",
            "project structure",
            "code structure",
            "structure of the codebase",
            "structure of this codebase",
            "structure of the project",
            "codebase architecture",
            "architecture of the codebase",
            "architecture of this codebase",
            "how is the code organised",
            "how is the code organized",
            "how is this codebase organised",
            "how is this codebase organized",
            "codebase signature",
        ),
    ),
    _Rule(
        "communities",
        ("module structure", "module communities", "module clusters", "file clusters"),
    ),
    _Rule(
        "cycles",
        (
            "import cycles",
            "import cycle",
            "circular imports",
            "circular import",
            "circular dependencies",
            "circular dependency",
            "dependency cycles",
            "cyclic imports",
            "cyclic dependencies",
        ),
    ),
    _Rule(
        "stats",
        (
            "codebase stats",
            "codebase statistics",
            "code statistics",
            "project statistics",
            "how big is the codebase",
            "how big is this codebase",
            "size of the codebase",
        ),
    ),
    _Rule("hits", ("hub files", "hubs and authorities", "authority files")),
)
CODEBASE_HINTS = tuple(h for rule in _CODEBASE_RULES for h in rule.hints)

_SEP = r"[\W_]+"  # what separates two words for the router
_FILLER = frozenset(
    [
        "a",
        "an",
        "the",
        "file",
        "files",
        "module",
        "modules",
        "package",
        "class",
        "function",
        "method",
        "def",
        "symbol",
        "type",
        "interface",
        "struct",
        "enum",
        "variable",
        "constant",
        "called",
        "named",
        "it",
        "this",
        "that",
    ]
)
_NAME_TOKEN = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")


def _hint_regex(hint: str) -> tuple[re.Pattern[str], int]:
    """A hint as a regex over the raw prompt (words as the router splits them, a `...` gap as
    a named group of at most 200 characters), with its word count."""
    parts: list[str] = []
    count = 0
    for piece in re.split(r"(?:(?<=\s)|^)(?:\.\.\.|\u2026)(?=\s|$)", hint):
        words = re.findall(r"[^\W_]+", piece)
        if words:
            parts.append(_SEP.join(re.escape(w) for w in words))
            count += len(words)
    body = f"{_SEP}(?P<gap>.{{1,200}}?){_SEP}".join(parts)
    return re.compile(rf"(?<![^\W_]){body}(?![^\W_])", re.IGNORECASE | re.DOTALL), count


@functools.cache
def _codebase_patterns() -> tuple[tuple[_Rule, re.Pattern[str], int], ...]:
    # compiled on first use, not at import: `ore --list-tools` never pays for it
    return tuple((rule, *_hint_regex(hint)) for rule in _CODEBASE_RULES for hint in rule.hints)


def _codebase_extract(prompt: str) -> dict[str, str]:
    """`op` and its argument from a prompt, taken from the hint with the most words (the
    earliest on a tie), as the router picks: "what depends on ore/core.py" ->
    op=dependents file=ore/core.py; "where is execute defined" -> op=symbol name=execute.
    Never `root`. An argument it cannot find is left out, and the query then says it is
    missing."""
    best: tuple[int, int, _Rule, re.Match[str]] | None = None
    for rule, pattern, count in _codebase_patterns():
        match = pattern.search(prompt)
        if match and (best is None or (-count, match.start()) < (-best[0], best[1])):
            best = (count, match.start(), rule, match)
    if best is None:
        return {}
    _, _, rule, match = best
    args = {"op": rule.op}
    gap = match.groupdict().get("gap")
    text = gap if gap is not None else prompt[match.end() :]
    if rule.arg == "from-to":
        ends = re.search(r"(?i)(?:from|between)\s+(\S+)\s+(?:to|and)\s+(\S+)", text)
        if ends:
            args["from"], args["to"] = (_path_token(x) for x in ends.groups())
            args = {k: v for k, v in args.items() if v}
    elif rule.arg == "name":
        found = _NAME_TOKEN.findall(text)
        names = [n for n in found if n not in _FILLER]
        if names:
            args["name"] = names[0].rsplit(".", 1)[-1]
    elif rule.arg is not None:
        value = _first_token(text)
        if value:
            args[rule.arg] = value
    return args


def _first_token(text: str) -> str:
    """The first path-like or quoted token of `text`, skipping words such as "the file"."""
    pos = 0
    for _ in range(8):
        token = PATH_TOKEN.match(text, pos)
        if token is None:
            return ""
        quoted = token.group(1) or token.group(2) or token.group(3)
        if quoted is not None:
            return quoted
        value = _path_token(token.group(4))
        if value and value.casefold() not in _FILLER:
            return value
        pos = token.end()
    return ""


def _path_token(raw: str) -> str:
    return raw.strip("\"'`").rstrip(".,;:!?)]}>'\"`")


def codebase_tool() -> Tool:
    """`codebase`: one query on the code graph of its root (the working folder, unless a
    `root` argument is given on the command line), injected as compact text of at most about
    4,000 characters (`ore.graph.ops.run_query`). Needs `filesystem-read`.

    `op` is one of `CODEBASE_OPS` (default `overview`); a file argument (`file`, `from`, `to`)
    must resolve inside the root, symlinks followed. The index it reads and refreshes lives in
    `$ORE_HOME/cache/graph/`.
    """
    return Tool(
        name="codebase",
        description="Answer a structural question about the code in the working folder "
        "(--tool-arg op=top-files|symbol|dependents|...).",
        permissions=("filesystem-read",),
        schema=_CODEBASE_SCHEMA,
        handler=_codebase,
        hints=CODEBASE_HINTS,
        extractor=_codebase_extract,
        routable_args=frozenset({"op", "file", "name", "query", "from", "to"}),
    )


def _codebase(args: Mapping[str, Any]) -> ToolResult:
    fail = failer("codebase")
    root = tool_root(fail, args.get("root"))
    query = {k: v for k, v in args.items() if k not in ("op", "root")}
    op = args.get("op", "overview")
    for key in _FILE_ARGS:
        if key in query:
            inside_root(fail, root, query[key], strict=False)
    try:
        text = run_query(root, op, query)
    except GraphError as exc:
        message = exc.message.replace("this op", f"op '{op}'", 1)
        raise fail(message if message.startswith("op '") else f"op '{op}': {message}") from exc
    shown = " ".join([op, *(f"{k}={v}" for k, v in sorted(query.items()))])
    meta = {"op": op, "args": query, "root": str(root), "chars": len(text)}
    meta["truncated"] = len(text) >= MAX_CHARS - 40 and text.endswith("narrow the query)")
    return ToolResult(tool_name="codebase", output=f"Query: {shown}\n{text}", metadata=meta)
