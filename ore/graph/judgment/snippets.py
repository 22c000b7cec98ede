"""Snippets as people hand them over: a piece of code, or a unified diff (`git diff | ...`)
whose added code is what the judgment queries compare.

A diff is recognised by its hunk headers (`@@ -a,b +c,d @@`). Its added lines are taken run by
run (consecutive `+` lines of one hunk, the `+` removed, dedented), each with the file and new
line numbers the diff gives, so the language comes from the file's extension and the code the
diff itself added (already in the working tree, and so in the index) is never reported as its
own duplicate. Everything else is one plain snippet. Light to import: tree-sitter loads only
when a snippet is compared.
"""

from __future__ import annotations

import re
import textwrap
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ...errors import GraphError
from ..index.languages import language_for
from ..index.source import text_lines

if TYPE_CHECKING:
    from ..results import SnippetMatch

__all__ = ["Compares", "Piece", "added_code", "duplicates_in", "one_snippet", "pieces"]

_HUNK = re.compile(r"@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_KIND_ORDER = {"exact": 0, "renamed": 1, "structural": 2, "similar": 3}
#: Runs of added code compared one by one for duplicates (the largest, when a diff has more).
MAX_RUNS = 20
_MIN_RUN_LINES = 3


class Compares(Protocol):
    """What `duplicates_in` asks of a graph: where a snippet already exists (`CodeGraph` is
    one)."""

    def duplicates_of(
        self,
        snippet: str | bytes,
        *,
        language: str | None = ...,
        limit: int | None = ...,
        exclude_tests: bool = ...,
    ) -> list[SnippetMatch]: ...


@dataclass(frozen=True, slots=True)
class Piece:
    """Code to compare: `text`, in `language` (None: the index's main one), and where a diff
    put it (`path`, lines `start`..`end` of the new file; `path` empty for a plain snippet)."""

    text: str
    language: str | None = None
    path: str = ""
    start: int = 0
    end: int = 0


def added_code(text: str) -> list[Piece] | None:
    """The runs of lines a unified diff adds, or None when `text` is not a diff."""
    lines = text_lines(text)
    if not any(_HUNK.match(line) for line in lines):
        return None
    out: list[Piece] = []
    path = ""
    old_left = new_left = number = 0
    run: list[str] = []
    run_start = 0

    def close() -> None:
        if run and any(line.strip() for line in run):
            body = textwrap.dedent("\n".join(run)).strip("\n") + "\n"
            language = language_for(path) if path else None
            out.append(Piece(body, language, path, run_start, run_start + len(run) - 1))
        run.clear()

    for line in lines:
        if old_left > 0 or new_left > 0:
            tag = line[:1]
            if tag == "+":
                if not run:
                    run_start = number
                run.append(line[1:])
                number += 1
                new_left -= 1
                continue
            if tag == "-":
                old_left -= 1
                continue
            if tag == "\\":  # "\ No newline at end of file"
                continue
            close()
            if tag in (" ", ""):  # context (an empty line: a context line whose space was lost)
                number += 1
                old_left -= 1
                new_left -= 1
                continue
            old_left = new_left = 0  # a malformed hunk ends here
        close()
        hunk = _HUNK.match(line)
        if hunk:
            old, start, new = hunk.groups()
            old_left = 1 if old is None else int(old)
            new_left = 1 if new is None else int(new)
            number = int(start)
        elif line.startswith("+++ "):
            path = _diff_path(line[4:])
    close()
    return out


def _diff_path(raw: str) -> str:
    name = raw.split("\t", 1)[0].strip()
    if len(name) > 1 and name[0] == name[-1] == '"':
        name = name[1:-1]
    if name == "/dev/null":
        return ""
    return name[2:] if name.startswith(("b/", "w/", "i/")) else name


def pieces(text: str, language: str | None = None, name: str = "") -> list[Piece]:
    """What to compare from `text`: the runs of code a diff adds (in files of a language ORE
    indexes), or `text` itself, in `language`, else the language of the file `name`, else
    None (the index's main language). GraphError when a diff adds no code."""
    added = added_code(text)
    if added is None:
        return [Piece(text, language or (language_for(name) if name else None))]
    found = [
        Piece(p.text, language or p.language, p.path, p.start, p.end)
        for p in added
        if language or p.language or not p.path
    ]
    if not found:
        raise GraphError("the diff adds no code in a language ORE indexes; give the code itself")
    return found


def one_snippet(text: str, language: str | None = None, name: str = "") -> tuple[str, str | None]:
    """One snippet and its language for the queries that take one (similar, consistent, place):
    the text itself, or the added code of a diff in its main language, the runs that parse
    joined (GraphError, the first run's, when none does)."""
    found = pieces(text, language, name)
    if len(found) == 1 and not found[0].path:
        return found[0].text, found[0].language
    counts: Counter[str | None] = Counter()
    for p in found:
        counts[p.language] += p.text.count("\n")
    main = counts.most_common(1)[0][0]
    from .shapes import snippet_shape

    kept: list[str] = []
    first: GraphError | None = None
    for p in found:
        if p.language != main:
            continue
        try:
            if main is not None:
                snippet_shape(p.text, main)
        except GraphError as exc:
            first = first or _placed(exc, p)
            continue
        kept.append(p.text)
    if not kept:
        raise first or GraphError("the diff adds no code to compare")
    return "\n\n".join(kept), main


def duplicates_in(
    g: Compares,
    text: str,
    *,
    language: str | None = None,
    name: str = "",
    limit: int | None = 10,
    exclude_tests: bool = False,
) -> list[SnippetMatch]:
    """`g.duplicates_of` for a snippet or, run by run, for the code a diff adds: best matches
    first, never the diff's own lines (which the index already holds)."""
    found = pieces(text, language, name)
    if len(found) == 1 and not found[0].path:
        p = found[0]
        return g.duplicates_of(
            p.text, language=p.language, limit=limit, exclude_tests=exclude_tests
        )
    runs = [p for p in found if _code_lines(p) >= _MIN_RUN_LINES] or found
    runs = sorted(runs, key=lambda p: -_code_lines(p))[:MAX_RUNS]
    best: dict[tuple[str, int, int], SnippetMatch] = {}
    first: GraphError | None = None
    compared = 0
    for p in runs:
        try:
            matches = g.duplicates_of(
                p.text, language=p.language, limit=None, exclude_tests=exclude_tests
            )
        except GraphError as exc:
            first = first or _placed(exc, p)
            continue
        compared += 1
        for m in matches:
            if _own(m, found):
                continue
            key = (m.path, m.start, m.end)
            if key not in best or best[key].score < m.score:
                best[key] = m
    if not compared and first is not None:
        raise first
    ranked = sorted(best.values(), key=lambda m: (-m.score, _KIND_ORDER[m.kind], m.path, m.start))
    return ranked[:limit]


def _code_lines(p: Piece) -> int:
    return sum(1 for line in text_lines(p.text) if line.strip())


def _own(m: SnippetMatch, found: list[Piece]) -> bool:
    return any(p.path == m.path and m.start <= p.end and p.start <= m.end for p in found)


def _placed(exc: GraphError, p: Piece) -> GraphError:
    where = f"{p.path}:{p.start}" if p.path else f"line {p.start}"
    return GraphError(f"{exc.message} (the code the diff adds at {where})")
