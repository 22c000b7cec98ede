"""What clone detection and similarity compare of a file or a snippet: its `FileShape`.

Computed on demand from the files themselves and kept by content hash (`shapecache`), so the
cold index pays nothing for judgment operations that are never asked for. A shape joins a
file's code lines and text lines (`lexer`), its functions' shapes (`function_shapes`) and, when
full, its convention facts (`facts`); a snippet is checked to be source text first.
"""

from __future__ import annotations

import textwrap
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Any

from ...errors import GraphError
from .facts import Fact, file_facts
from .function_shapes import Function, functions
from .lexer import TextLines, family, lex, lex_text

__all__ = ["MAX_SNIPPET_BYTES", "FileShape", "make_shape", "snippet_shape", "snippet_text"]

MAX_SNIPPET_BYTES = 1_000_000


@dataclass(frozen=True, slots=True)
class FileShape:
    """A file's code lines as parallel tuples (line number, exact key, renamed key, tokens),
    its text lines (`text`: line numbers, exact keys, tokens, multi-line strings as text) and
    its functions: what clone detection and `similar` compare. A lean shape (`full` False) has
    no facts and no node-kind profiles: clone detection needs neither, and they cost a fifth of
    the shaping."""

    path: str
    language: str
    numbers: tuple[int, ...]
    exact: tuple[int, ...]
    renamed: tuple[int, ...]
    tokens: tuple[int, ...]
    functions: tuple[Function, ...]
    facts: tuple[Fact, ...] = ()
    text: TextLines = ((), (), ())
    full: bool = True

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The indexes `lo:hi` of the code lines numbered `start`..`end`."""
        return bisect_left(self.numbers, start), bisect_right(self.numbers, end)

    def text_lines(self) -> TextLines:
        """Line numbers, exact keys and tokens with multi-line strings as text."""
        return self.text if self.text[0] else (self.numbers, self.exact, self.tokens)

    def to_row(self) -> tuple[object, ...]:
        return (
            self.language,
            self.numbers,
            self.exact,
            self.renamed,
            self.tokens,
            tuple(map(tuple, self.functions)),
            self.facts,
            self.text,
            self.full,
        )

    @classmethod
    def from_row(cls, path: str, row: tuple[Any, ...]) -> FileShape:
        language, numbers, exact, renamed, tokens, funcs, facts, text, full = row
        functions = tuple(Function(*f) for f in funcs)
        return cls(path, language, numbers, exact, renamed, tokens, functions, facts, text, full)


def make_shape(path: str, language: str, data: bytes, *, lean: bool = False) -> FileShape:
    """The shape of a file's bytes; `lean`: without facts and profiles (`FileShape.full`)."""
    funcs, _broken = functions(language, data, profile=not lean)
    text = data.decode("utf-8", "replace")
    spans: list[tuple[int, int]] = []
    literals: list[tuple[int, int]] | None = None if lean else []
    lines = lex(language, text, spans, literals)
    facts = () if lean else file_facts(family(language), text, literals)
    texts = lex_text(language, text, lines, spans)
    if texts == (lines[0], lines[1], lines[3]):
        texts = ((), (), ())  # no multi-line string: the code lines are the text lines
    return FileShape(path, language, *lines, funcs, facts, texts, not lean)


def snippet_text(snippet: str | bytes) -> str:
    """A snippet as text, or GraphError (one line) for binary, oversized or empty input."""
    if isinstance(snippet, bytes):
        if len(snippet) > MAX_SNIPPET_BYTES:
            raise GraphError(f"snippet is {len(snippet):,} bytes; the limit is 1 MB")
        if b"\0" in snippet[:8192]:
            raise GraphError("snippet is binary (it holds NUL bytes); give source text")
        try:
            snippet = snippet.decode("utf-8")
        except UnicodeDecodeError:
            raise GraphError("snippet is not UTF-8 text; give source text") from None
    if len(snippet) > MAX_SNIPPET_BYTES:
        raise GraphError(f"snippet is {len(snippet):,} characters; the limit is 1 MB")
    if "\0" in snippet:
        raise GraphError("snippet is binary (it holds NUL bytes); give source text")
    if not snippet.strip():
        raise GraphError("snippet is empty; give the code to compare")
    return snippet


def snippet_shape(snippet: str | bytes, language: str) -> FileShape:
    """The shape of a snippet; GraphError when it is not source text or does not parse."""
    text = snippet_text(snippet)
    if language == "python":
        text = textwrap.dedent(text)  # a method copied with its indentation
    data = text.encode("utf-8")
    funcs, broken = functions(language, data, profile=True)
    if broken:
        where = _first_error_line(language, data)
        raise GraphError(
            f"snippet does not parse as {language} (line {where}); give whole statements"
        )
    lines = lex(language, text)
    if not lines[0]:
        raise GraphError("snippet holds no code (only comments or blank lines)")
    return FileShape("<snippet>", language, *lines, funcs)


def _first_error_line(language: str, data: bytes) -> int:
    from ..index.languages import parser_and_query

    parser, _query = parser_and_query(language)
    stack = [parser.parse(data).root_node]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            return int(node.start_point[0]) + 1
        if node.has_error:
            stack.extend(reversed(node.children))
    return 1
