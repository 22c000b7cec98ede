"""What one op is: the `Op` row type, the vocabulary of the arguments every op takes (their
kinds, what each means, the choices and least values), and how a row is built.

Apart from the rows themselves so the three readers of the table (`ore graph`, the `codebase`
tool, the MCP tools) can read an op's shape and the arguments' vocabulary without the code that
answers any op.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from ..graph import CodeGraph

__all__ = [
    "ARG_ABOUT",
    "ARG_CHOICES",
    "ARG_KINDS",
    "ARG_MIN",
    "MAX_CHARS",
    "SAFE",
    "SNIPPET_ARG",
    "TOOL_MAX_TOKENS",
    "Answer",
    "Op",
    "Run",
    "row",
    "to_data",
]

MAX_CHARS = 4000
#: How an op answers as prompt-sized text (`run_query`); `Answer`: as result objects.
Run = Callable[["CodeGraph", Mapping[str, str]], str]
_Data = Callable[["CodeGraph", Mapping[str, str]], Any]
Answer = Callable[["CodeGraph", Mapping[str, str]], Any]

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
    run: Run
    data: _Data | None = None
    about: str = ""
    required: tuple[str, ...] = ()
    tool: str = ""
    answer: Answer | None = None
    cli: frozenset[str] = frozenset()


def to_data(found: Any) -> Any:
    """An answer as its JSON document: a result's `to_dict()`, a list of them as a list, None
    as null (the one conversion behind `Op.data`, `ore graph --json` and the MCP tools)."""
    if found is None:
        return None
    if isinstance(found, list):
        return [r.to_dict() for r in found]
    return found.to_dict()


def _data(answer: Answer) -> _Data:
    return lambda g, args: to_data(answer(g, args))


def row(
    name: str,
    run: Run,
    *args: str,
    answer: Answer | None = None,
    about: str = "",
    required: tuple[str, ...] = (),
    tool: str | None = None,
    cli: tuple[str, ...] = (),
) -> tuple[str, Op]:
    """One row of the table: its MCP name is the op's with `_` for `-` unless `tool` says
    otherwise, and its `data` is `answer` as JSON (`to_data`)."""
    mcp_name = name.replace("-", "_") if tool is None else tool
    data = None if answer is None else _data(answer)
    op = Op(name, frozenset(args), run, data, about, required, mcp_name, answer, frozenset(cli))
    return name, op


#: The end of every tool's `about`: what a model may count on.
SAFE = " Read-only: answered from the index, no model is called and nothing is run."
