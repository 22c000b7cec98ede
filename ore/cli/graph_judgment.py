"""`ore graph duplicates|similar|conventions|consistent|place|signature|files`: a reviewer's
questions, answered from the index without a model (registered on the `ore graph` group).

A snippet is `--snippet FILE` (a regular file, read without blocking) or `--snippet -` (stdin);
a unified diff (`git diff | ore graph duplicates --snippet -`) stands for the code it adds. Only
click is imported at start-up; the graph loads inside the command.
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from ..graph.ops import ARG_CHOICES, ARG_MIN
from .console import reported
from .graph_common import answer, common, read_snippet, show

__all__ = ["JUDGMENT_COMMANDS", "search_by_file"]

# The choices are the op table's, which the MCP tools offer too (a light import: `--help` and
# usage errors load no graph); tests/graph/test_graph_cli_judgment.py holds them equal to the
# graph's own. `--kind` is the command line's alone.
KINDS = ("exact", "renamed", "structural")
MODES = ARG_CHOICES["mode"]
TOPICS = ARG_CHOICES["topic"]
CRITERIA = ARG_CHOICES["criteria"]
LEVELS = ARG_CHOICES["level"]
SORTS = ARG_CHOICES["sort"]
LANGUAGES = ARG_CHOICES["language"]
#: How a language is written in a sentence ("no TypeScript file is indexed").
_LANGUAGE_NAMES = {"javascript": "JavaScript", "typescript": "TypeScript", "tsx": "TSX"}

_CONTEXT_HELP = (
    "Rank tests, examples and docs as equals of library code (by default they come after it, "
    "or are left out)."
)
_SNIPPET_HELP = (
    "The code to compare: a FILE, or - for stdin. A unified diff (git diff) stands for the "
    "code it adds."
)


def _name_of(source: str) -> str:
    """The snippet file's name, whose extension names its language ('' for stdin)."""
    return "" if source == "-" else source


@click.command()
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option("--snippet", metavar="FILE|-", help=_SNIPPET_HELP)
@click.option(
    "--min-lines",
    type=click.IntRange(min=ARG_MIN["min_lines"]),
    default=None,
    help="Clones spanning at least this many lines.  [default: 5]",
)
@click.option(
    "--min-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="Clones of at least this many tokens.  [default: 15]",
)
@click.option("--exclude-tests", is_flag=True, help="Leave out test files and generated code.")
@click.option(
    "--kind",
    "kinds",
    type=click.Choice(KINDS),
    multiple=True,
    help="Only these kinds of clone (repeat).  [default: all]",
)
@common(None, optional_limit=True)
def duplicates(
    paths: tuple[str, ...],
    snippet: str | None,
    min_lines: int | None,
    min_tokens: int | None,
    exclude_tests: bool,
    kinds: tuple[str, ...],
    root: str,
    as_json: bool,
    limit: int | None,
) -> None:
    """Find duplicated code: clone groups under PATH (the whole tree when none), or where the
    --snippet code already exists.

    Clone groups are exact (the same tokens, docstrings included; a clone may start and end
    inside a line), renamed (the same code lines once names and literals are normalised) or
    structural (whole functions of the same syntax shape), largest first. With
    --snippet, the best matches come first with a score in [0, 1] (at most 10 by default).

    \b
    Example:
        ore graph duplicates --min-lines 8 --exclude-tests src/
        git diff | ore graph duplicates --snippet -
    """
    from ..graph.render.judgment import clones_text, snippet_matches_text

    if snippet is not None and (paths or min_lines or min_tokens or kinds):
        raise click.UsageError(
            "--snippet compares one piece of code with the tree; PATH, --min-lines, "
            "--min-tokens and --kind apply to clone groups"
        )
    with reported():
        if snippet is not None:
            matches = answer(
                "duplicates",
                root,
                snippet=read_snippet(snippet),
                snippet_name=_name_of(snippet),
                limit=limit,
                exclude_tests=exclude_tests,
            )
            empty = "no code like the snippet"
            show(as_json, matches, lambda: snippet_matches_text(matches), empty)
            return
        groups = answer(
            "duplicates",
            root,
            min_lines=min_lines,
            min_tokens=min_tokens,
            paths=paths,
            exclude_tests=exclude_tests,
            kinds=kinds,
            limit=limit,
        )
        show(as_json, groups, lambda: clones_text(groups), "no duplicates")


@click.command()
@click.argument("name", required=False)
@click.option("--snippet", metavar="FILE|-", help=_SNIPPET_HELP)
@click.option(
    "--mode",
    type=click.Choice(MODES),
    default="name",
    show_default=True,
    help="Compare identifier words, parameter shape, or syntax-tree shape.",
)
@click.option("--include-context", is_flag=True, help=_CONTEXT_HELP)
@common(10)
def similar(
    name: str | None,
    snippet: str | None,
    mode: str,
    include_context: bool,
    root: str,
    as_json: bool,
    limit: int,
) -> None:
    """Find definitions like NAME (any identifier, or Class.method) or like the --snippet code.

    By name: shared identifier words, verbs folded (get ~ fetch ~ load). By signature: the same
    kind and parameters. By shape: the same syntax tree.

    \b
    Example:
        ore graph similar get_user_by_id
        ore graph similar --snippet new_helper.py --mode shape --json
    """
    from ..graph.render.judgment import similar_text

    if (name is None) == (snippet is None):
        raise click.UsageError("give NAME or --snippet FILE|-, one of them")
    with reported():
        rows = answer(
            "similar",
            root,
            name=name,
            snippet=None if snippet is None else read_snippet(snippet),
            snippet_name=None if snippet is None else _name_of(snippet),
            mode=mode,
            limit=limit,
            include_context=include_context,
        )
        show(as_json, rows, lambda: similar_text(rows), "nothing similar")


@click.command()
@click.argument("topic", required=False, type=click.Choice(TOPICS))
@click.option(
    "--path",
    "paths",
    multiple=True,
    metavar="PATH",
    help="Learn from files under PATH only (repeat).  [default: the whole tree]",
)
@click.option("--include-context", is_flag=True, help=_CONTEXT_HELP)
@common(None)
def conventions(
    topic: str | None, paths: tuple[str, ...], include_context: bool, root: str, as_json: bool
) -> None:
    """Show the house conventions: recurring patterns of the highest-ranked files, with counts,
    shares and one example each. No TOPIC: a short summary of every topic.

    \b
    Example:
        ore graph conventions
        ore graph conventions errors --json
    """
    from ..graph.render.judgment import conventions_text

    with reported():
        rows = answer(
            "conventions", root, topic=topic, paths=paths, include_context=include_context
        )
        show(as_json, rows, lambda: conventions_text(rows))


@click.command()
@click.option("--snippet", metavar="FILE|-", required=True, help=_SNIPPET_HELP)
@click.option(
    "--with",
    "with_paths",
    multiple=True,
    metavar="PATH",
    help="Hold the snippet to the conventions of files under PATH (repeat).",
)
@click.option(
    "--lang",
    "language",
    type=click.Choice(LANGUAGES),
    help="Compare with files of this language.  [default: the snippet's]",
)
@click.option(
    "--criteria",
    type=click.Choice(CRITERIA),
    default="all",
    show_default=True,
    help="What to check.",
)
@click.option("--include-context", is_flag=True, help=_CONTEXT_HELP)
@common(None)
def consistent(
    snippet: str,
    with_paths: tuple[str, ...],
    language: str | None,
    criteria: str,
    include_context: bool,
    root: str,
    as_json: bool,
) -> None:
    """Score how far the --snippet code strays from the house conventions: 0 is consistent, 1
    is against every one, with each concrete deviation.

    \b
    Example:
        ore graph consistent --snippet new_module.py --with app/users
        git diff | ore graph consistent --snippet - --criteria naming --json
    """
    from ..graph.render.judgment import consistency_text

    with reported():
        found = answer(
            "consistent",
            root,
            snippet=read_snippet(snippet),
            snippet_name=_name_of(snippet),
            paths=with_paths,
            language=language,
            criteria=criteria,
            include_context=include_context,
        )
        show(as_json, found, lambda: consistency_text(found))


@click.command()
@click.argument("description")
@click.option("--snippet", metavar="FILE|-", help=_SNIPPET_HELP)
@click.option("--include-context", is_flag=True, help=_CONTEXT_HELP)
@common(5)
def place(
    description: str,
    snippet: str | None,
    include_context: bool,
    root: str,
    as_json: bool,
    limit: int,
) -> None:
    """Suggest where new code described by DESCRIPTION belongs: module communities and files,
    ranked, each with the names, imports and terms it shares with the description (and the
    --snippet code).

    \b
    Example:
        ore graph place "compute the tax of an invoice"
        ore graph place "cache user lookups" --snippet draft.py --json
    """
    from ..graph.render.judgment import placement_text

    with reported():
        found = answer(
            "place",
            root,
            description=description,
            snippet=None if snippet is None else read_snippet(snippet),
            snippet_name=None if snippet is None else _name_of(snippet),
            limit=limit,
            include_context=include_context,
        )
        show(as_json, found, lambda: placement_text(found))


@click.command()
@click.option(
    "--level",
    type=click.Choice(LEVELS),
    default="standard",
    show_default=True,
    help="How much to say (budgets 300, 1000, 2000, 4000 tokens).",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="Never more than this many tokens.  [default: the level's]",
)
@common(None)
def signature(level: str, max_tokens: int | None, root: str, as_json: bool) -> None:
    """Print the codebase signature: the compact picture of the tree (central files and their
    public names, module communities, key symbols, dependency patterns, conventions), never over
    its token budget. Tokens per line: the larger of (characters + 1) / 4, rounded up, and the
    count of words and punctuation marks.

    \b
    Example:
        ore graph signature --level lean
        ore graph signature --level deep --max-tokens 1500 --json
    """
    from ..graph.render.judgment import signature_text

    with reported():
        found = answer("signature", root, level=level, max_tokens=max_tokens)
        show(as_json, found, lambda: signature_text(found))


@click.command()
@click.option("--language", type=click.Choice(LANGUAGES), help="Only files of this language.")
@click.option(
    "--sort",
    type=click.Choice(SORTS),
    default="rank",
    show_default=True,
    help="PageRank, size (largest first) or path.",
)
@common(None, optional_limit=True)
def files(language: str | None, sort: str, root: str, as_json: bool, limit: int | None) -> None:
    """List the indexed files with language, lines, bytes, symbols and PageRank score.

    \b
    Example:
        ore graph files --language python --sort size --limit 10
    """
    from ..graph.render.judgment import files_text

    with reported():
        rows = answer("files", root, language=language, sort=sort, limit=limit)
        which = _LANGUAGE_NAMES.get(language, language.capitalize()) if language else None
        empty = f"no {which} file is indexed" if which else "no files indexed"
        show(as_json, rows, lambda: files_text(rows), empty)


def search_by_file(query: str, root: str, as_json: bool, limit: int) -> None:
    """`ore graph search QUERY --by-file`: the hits grouped by file, most hits first."""
    from ..graph.render.judgment import file_hits_text

    rows = answer("search", root, query=query, by_file=True, limit=limit)
    show(as_json, rows, lambda: file_hits_text(rows), f"no line contains '{query}'")


JUDGMENT_COMMANDS: Sequence[click.Command] = (
    duplicates,
    similar,
    conventions,
    consistent,
    place,
    signature,
    files,
)
