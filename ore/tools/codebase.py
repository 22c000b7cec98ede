"""The `codebase` tool: one query on the code graph of its root, as compact text for a prompt.

Its routing hints send structural questions ("what depends on X", "where is X defined", "most
important files") and a reviewer's questions ("does this duplicate existing code?", "what is the
convention for errors?", "where should I put ...") to it, with the query's arguments taken from
the prompt (`ore.tools.codebase_args`); a routed call can set `op` and the query's own arguments,
never `root`, and never a snippet: code to compare comes only as text piped to ORE (the tool's
`piped_arg`) or a `--tool-arg`. The graph package (tree-sitter, networkx) is imported only when
the tool runs, so listing tools never pays for it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._fs import os_error_words
from ..errors import GraphError, ToolError
from ..graph.ops import ARG_KINDS, MAX_CHARS, OPS, SNIPPET_ARG, run_query
from .base import Tool, failer, inside_root, tool_root
from .codebase_args import Rule, extract

if TYPE_CHECKING:
    from ..types import ToolResult

__all__ = ["CODEBASE_HINTS", "CODEBASE_OPS", "codebase_tool"]

#: The queries `codebase` answers: the graph's own table (`ore.graph.ops.OPS`).
CODEBASE_OPS = tuple(OPS)
#: Arguments naming a file: each must resolve inside the root before the graph is asked.
_FILE_ARGS = tuple(k for k, kind in ARG_KINDS.items() if kind == "path")
#: Arguments naming files or folders, separated by commas: each must resolve inside the root.
_PATHS_ARGS = tuple(k for k, kind in ARG_KINDS.items() if kind == "paths")
#: Arguments holding text (code, a description): shown by their size, never echoed whole.
_TEXT_ARGS = tuple(k for k, kind in ARG_KINDS.items() if kind == "text")
MAX_TEXT = 8 * 1024 * 1024
_ARG_SCHEMAS: Mapping[str, dict[str, Any]] = {
    "path": {"type": "string", "minLength": 1, "maxLength": 4096},
    "paths": {"type": "string", "minLength": 1, "maxLength": 16384},
    "word": {"type": "string", "minLength": 1, "maxLength": 200},
    "text": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT},
    "lines": {"type": "string", "pattern": "^[0-9][0-9, ]{0,199}$"},
    "number": {"type": "string", "pattern": "^[0-9]{1,6}$"},
    "flag": {"type": "string", "enum": ["true", "false", "yes", "no", "1", "0"]},
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


_CODEBASE_RULES = (
    Rule(
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
    Rule(
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
    Rule(
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
    Rule(
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
    Rule(
        "path",
        ("dependency path", "import path", "import chain", "dependency chain"),
        "from-to",
    ),
    Rule(
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
    Rule(
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
    Rule(
        "communities",
        ("module structure", "module communities", "module clusters", "file clusters"),
    ),
    Rule(
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
    Rule(
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
    Rule("hits", ("hub files", "hubs and authorities", "authority files")),
    # a reviewer's questions, answered by the judgment queries (piped code is the snippet)
    Rule(
        "duplicates",
        (
            "does this duplicate",
            "does this code duplicate",
            "is this duplicated",
            "is this a duplicate",
            "is this code duplicated",
            "duplicate existing code",
            "duplicates existing code",
            "duplicated code",
            "duplicate code",
            "code duplication",
            "find duplicates",
            "find duplicate code",
            "copy pasted code",
            "clone detection",
        ),
    ),
    Rule(
        "similar",
        (
            "is there already a function that",
            "is there already a function",
            "is there already a method that",
            "is there already a helper that",
            "is there already code that",
            "is there an existing function that",
            "is there a function that",
            "do we already have a function that",
            "similar functions to",
            "functions similar to",
            "similar functions",
        ),
        "words",
    ),
    Rule(
        "conventions",
        (
            "what is the convention for",
            "what's the convention for",
            "what is the convention",
            "what are the conventions",
            "what are the conventions for",
            "conventions for",
            "convention for",
            "coding conventions",
            "code conventions",
            "naming conventions",
            "house style",
        ),
        "topic",
    ),
    Rule(
        "place",
        (
            "where should i put",
            "where should we put",
            "where should i add",
            "where should we add",
            "where should this code go",
            "where should this function go",
            "where should this go",
            "where does this code belong",
            "where does this belong",
            "which file should this go in",
            "which module should this go in",
        ),
        "description",
    ),
    Rule(
        "consistent",
        (
            "is this consistent with",
            "is this code consistent with",
            "is this consistent",
            "consistent with the codebase",
            "consistent with the conventions",
            "does this follow the conventions",
            "does this follow our conventions",
            "does this follow the house style",
            "does this match the conventions",
        ),
        "paths",
    ),
)
CODEBASE_HINTS = tuple(h for rule in _CODEBASE_RULES for h in rule.hints)
#: What a routed call may set: the op and its arguments from the prompt; never `root`, never
#: `snippet` (piped text only).
ROUTABLE_ARGS = frozenset(
    {"op", "file", "name", "query", "from", "to", "topic", "description", "paths"}
)


def _codebase_extract(prompt: str) -> dict[str, str]:
    """`op` and its argument from a prompt (`ore.tools.codebase_args.extract`)."""
    return extract(prompt, _CODEBASE_RULES)


def _piped_arg(args: Mapping[str, str]) -> str | None:
    """`snippet` for the ops that compare code (not for `similar` when a name was given)."""
    spec = OPS.get(args.get("op") or "overview")
    if spec is None or SNIPPET_ARG not in spec.args:
        return None
    return None if args.get("op") == "similar" and args.get("name") else SNIPPET_ARG


def codebase_tool() -> Tool:
    """`codebase`: one query on the code graph of its root (the working folder, unless a
    `root` argument is given on the command line), injected as compact text of at most about
    4,000 characters (`ore.graph.ops.run_query`). Needs `filesystem-read`.

    `op` is one of `CODEBASE_OPS` (default `overview`); a file argument (`file`, `from`, `to`,
    each of `paths`) must resolve inside the root, symlinks followed. `snippet` (the code
    `duplicates`, `similar`, `consistent` and `place` compare) is the text piped to ORE or a
    `--tool-arg`, never read from a file. The index it reads and refreshes lives in
    `$ORE_HOME/cache/graph/`.
    """
    return Tool(
        name="codebase",
        description="Answer a structural or review question about the code in the working "
        "folder (--tool-arg op=top-files|symbol|dependents|duplicates|conventions|...).",
        permissions=("filesystem-read",),
        schema=_CODEBASE_SCHEMA,
        handler=_codebase,
        hints=CODEBASE_HINTS,
        extractor=_codebase_extract,
        routable_args=ROUTABLE_ARGS,
        piped_arg=_piped_arg,
    )


def _codebase(args: Mapping[str, Any]) -> ToolResult:
    from ..types import ToolResult

    fail = failer("codebase")
    folder = _identity(fail, args.get("root") or ".")  # the working folder itself, by inode
    root = tool_root(fail, args.get("root"))
    _still(fail, root, folder)
    query = {k: v for k, v in args.items() if k not in ("op", "root")}
    op = args.get("op", "overview")
    for key in _FILE_ARGS:
        if key in query:
            inside_root(fail, root, query[key], strict=False)
    for key in _PATHS_ARGS:
        for path in query.get(key, "").split(","):
            if path.strip():
                inside_root(fail, root, path.strip(), strict=False)
    try:
        text = run_query(root, op, query)
    except GraphError as exc:
        message = exc.message.replace("this op", f"op '{op}'", 1)
        raise fail(message if message.startswith("op '") else f"op '{op}': {message}") from exc
    _still(fail, root, folder)  # read by path: an answer from a folder swapped in is dropped
    brief = {k: _brief(v) if k in _TEXT_ARGS else v for k, v in sorted(query.items())}
    shown = " ".join([op, *(f"{k}={v}" for k, v in brief.items())])
    meta = {"op": op, "args": brief, "root": str(root), "chars": len(text)}
    meta["truncated"] = len(text) >= MAX_CHARS - 40 and text.endswith("narrow the query)")
    return ToolResult(tool_name="codebase", output=f"Query: {shown}\n{text}", metadata=meta)


def _identity(fail: Callable[[str], ToolError], folder: str) -> tuple[int, int]:
    """The folder's device and inode: "." is the working folder itself, whatever its path."""
    try:
        found = os.stat(folder)
    except OSError as exc:
        what = f"root {folder!r}" if folder != "." else "the working folder"
        raise fail(f"{what} cannot be used: {os_error_words(exc)}") from exc
    return found.st_dev, found.st_ino


def _still(fail: Callable[[str], ToolError], root: Path, folder: tuple[int, int]) -> None:
    """The graph reads its root by path: unless that path still names the folder the call
    began in (a folder above it renamed, or swapped for a link elsewhere), nothing read is
    answered. A swap and a swap back both inside one call would pass, as for `ore mcp`."""
    try:
        found = os.stat(root)
        same = (found.st_dev, found.st_ino) == folder
    except OSError:
        same = False
    if not same:
        raise fail(
            f"the folder {str(root)!r} changed while it was read (a folder above it was moved "
            "or replaced); run the query again"
        )


def _brief(text: str) -> str:
    """Text shown in the query line: short text as it is, code as its size."""
    if "\n" not in text.strip() and len(text) <= 80:
        return text
    lines = text.count("\n") + (not text.endswith("\n"))
    return f"<{lines} lines, {len(text.encode('utf-8', 'replace')):,} bytes>"
