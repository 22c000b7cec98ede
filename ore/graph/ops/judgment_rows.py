"""The table's judgment rows: duplicates, similar code, conventions, consistency, where new code
belongs, the codebase signature (and `overview`, the signature at `standard`) and the file list
(the answers of `ore.graph.judgment`, rendered by `ore.graph.render.judgment`).

Apart from the structure rows as `ore.cli.graph_judgment` is apart from `ore.cli.graph`: these
read snippets and judge code against the tree. `ore.graph.ops` puts both halves in its one table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...errors import GraphError
from .args import flag, number, path_list, snippet_of, some, words
from .op import SAFE, SNIPPET_ARG, TOOL_MAX_TOKENS, Op, row

if TYPE_CHECKING:
    from ..graph import CodeGraph

__all__ = ["OVERVIEW", "ROWS"]


def _signature(g: CodeGraph, args: Mapping[str, str]) -> str:
    """The codebase signature (`overview` is this at `standard`), sized to fit MAX_CHARS."""
    from ..judgment.signature import DEFAULT_TOKENS

    level = args.get("level") or "standard"
    budget = DEFAULT_TOKENS.get(level, TOOL_MAX_TOKENS)
    budget = min(number(args, "max_tokens", budget), TOOL_MAX_TOKENS)
    s = g.signature(level, budget)
    return f"{s.text}\n({s.tokens} of {s.max_tokens} tokens, level {s.level})"


def _duplicates(g: CodeGraph, args: Mapping[str, str]) -> str:
    from ..judgment.snippets import duplicates_in
    from ..render.judgment import clones_text, snippet_matches_text

    exclude = flag(args, "exclude_tests")
    if args.get(SNIPPET_ARG):
        for key in ("paths", "min_lines", "min_tokens"):
            if key in args:
                raise GraphError(f"'{key}' applies to clone groups, not to a snippet")
        rows = duplicates_in(
            g,
            args[SNIPPET_ARG],
            language=args.get("language") or None,
            limit=number(args, "limit", 10),
            exclude_tests=exclude,
        )
        return (
            "code like the snippet:\n" + snippet_matches_text(rows)
            if rows
            else ("no code like the snippet (nothing scores 0.5 or more)")
        )
    groups = g.duplicates(
        min_lines=number(args, "min_lines", 5, low=2),
        min_tokens=number(args, "min_tokens", 15),
        paths=path_list(args),
        exclude_tests=exclude,
        limit=number(args, "limit", 10),
    )
    return clones_text(groups)


def _similar(g: CodeGraph, args: Mapping[str, str]) -> str:
    from ..judgment.snippets import one_snippet
    from ..render.judgment import similar_text

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
        limit=number(args, "limit", 10),
    )
    return similar_text(rows)


def _conventions(g: CodeGraph, args: Mapping[str, str]) -> str:
    from ..render.judgment import conventions_text

    return conventions_text(g.conventions(args.get("topic") or None, paths=path_list(args)))


def _consistent(g: CodeGraph, args: Mapping[str, str]) -> str:
    from ..judgment.snippets import one_snippet
    from ..render.judgment import consistency_text

    snippet, language = one_snippet(snippet_of(args), args.get("language") or None)
    found = g.consistent(
        snippet, paths=path_list(args), language=language, criteria=args.get("criteria") or "all"
    )
    return consistency_text(found)


def _place(g: CodeGraph, args: Mapping[str, str]) -> str:
    from ..judgment.snippets import one_snippet
    from ..render.judgment import placement_text

    description, snippet = args.get("description", ""), args.get(SNIPPET_ARG)
    language = None
    if snippet:
        snippet, language = one_snippet(snippet)
    elif not description.strip():
        raise GraphError("this op needs 'description=...' (what the new code does) or a snippet")
    found = g.place(description, snippet=snippet, limit=number(args, "limit", 5), language=language)
    return placement_text(found)


def _files(g: CodeGraph, args: Mapping[str, str]) -> str:
    from ..render.judgment import files_text

    rows = g.list_files(
        language=args.get("language") or None,
        sort=args.get("sort") or "rank",
        limit=number(args, "limit", 30),
    )
    return files_text(rows) if rows else "no files indexed"


def _answer_duplicates(g: CodeGraph, args: Mapping[str, str]) -> Any:
    exclude = flag(args, "exclude_tests")
    if args.get(SNIPPET_ARG) is not None:
        for key in ("paths", "min_lines", "min_tokens", "kinds"):
            if key in args:
                raise GraphError(f"'{key}' applies to clone groups, not to a snippet")
        from ..judgment.snippets import duplicates_in

        return duplicates_in(
            g,
            args[SNIPPET_ARG],
            language=args.get("language") or None,
            name=args.get("snippet_name", ""),
            limit=number(args, "limit", 10),
            exclude_tests=exclude,
        )
    return g.duplicates(
        min_lines=number(args, "min_lines", 5, low=2),
        min_tokens=number(args, "min_tokens", 15),
        paths=path_list(args),
        exclude_tests=exclude,
        kinds=words(args, "kinds") or ("exact", "renamed", "structural"),
        limit=some(args, "limit"),
    )


def _answer_similar(g: CodeGraph, args: Mapping[str, str]) -> Any:
    from ..judgment.snippets import one_snippet

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
        limit=number(args, "limit", 10),
        include_context=flag(args, "include_context"),
    )


def _answer_consistent(g: CodeGraph, args: Mapping[str, str]) -> Any:
    from ..judgment.snippets import one_snippet

    if args.get(SNIPPET_ARG) is None:
        snippet_of(args)  # the error that says how to give one
    snippet, language = one_snippet(
        args[SNIPPET_ARG], args.get("language") or None, args.get("snippet_name", "")
    )
    return g.consistent(
        snippet,
        paths=path_list(args),
        language=language,
        criteria=args.get("criteria") or "all",
        include_context=flag(args, "include_context"),
    )


def _answer_place(g: CodeGraph, args: Mapping[str, str]) -> Any:
    from ..judgment.snippets import one_snippet

    description, snippet = args.get("description", ""), args.get(SNIPPET_ARG)
    language = None
    if snippet is not None:
        snippet, language = one_snippet(snippet, name=args.get("snippet_name", ""))
    elif "description" not in args:
        raise GraphError("this op needs 'description=...' (what the new code does) or a snippet")
    return g.place(
        description,
        snippet=snippet,
        limit=number(args, "limit", 5),
        include_context=flag(args, "include_context"),
        language=language,
    )


#: `overview`, the table's first row: the signature at `standard`, for the `codebase` tool only.
OVERVIEW: tuple[str, Op] = row("overview", _signature, "level", "max_tokens", tool="")

#: The judgment rows, in the table's order (after the structure rows).
ROWS: tuple[tuple[str, Op], ...] = (
    row(
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
        "first." + SAFE,
    ),
    row(
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
        "name or snippet." + SAFE,
    ),
    row(
        "conventions",
        _conventions,
        "topic",
        "paths",
        answer=lambda g, a: g.conventions(
            a.get("topic") or None,
            paths=path_list(a),
            include_context=flag(a, "include_context"),
        ),
        cli=("include_context",),
        about="The house conventions (errors, logging, imports, naming, async, tests): "
        "recurring patterns of the central files with counts, shares and an example each; "
        "follow them in new code." + SAFE,
    ),
    row(
        "consistent",
        _consistent,
        "snippet",
        "paths",
        "language",
        "criteria",
        answer=_answer_consistent,
        cli=("include_context", "snippet_name"),
        about="How far a snippet strays from the house conventions (0 consistent, 1 against "
        "every one), with each concrete deviation: check new code before proposing it." + SAFE,
        required=("snippet",),
    ),
    row(
        "place",
        _place,
        "description",
        "snippet",
        "limit",
        answer=_answer_place,
        cli=("include_context", "snippet_name"),
        about="Where new code belongs: module communities and files ranked for a "
        "description (and optionally the code), each with the names and terms it shares." + SAFE,
        required=("description",),
    ),
    row(
        "signature",
        _signature,
        "level",
        "max_tokens",
        answer=lambda g, a: g.signature(a.get("level") or "standard", some(a, "max_tokens")),
        about="The codebase signature: a compact picture of the tree (central files and "
        "their public names, communities, key symbols, dependency patterns, conventions) "
        "within a token budget. Call it first on an unfamiliar tree." + SAFE,
    ),
    row(
        "files",
        _files,
        "language",
        "sort",
        "limit",
        answer=lambda g, a: g.list_files(
            language=a.get("language") or None,
            sort=a.get("sort") or "rank",
            limit=some(a, "limit"),
        ),
        about="The indexed files with language, size, lines, symbols and PageRank score, by "
        "rank, size or path." + SAFE,
    ),
)
