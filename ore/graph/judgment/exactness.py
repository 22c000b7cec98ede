"""An exact clone group is the same text at every place it lists: what `duplicates` promises.

The runs behind a group are found on tokens (`runs`), and two things can make the reported
places differ in text: an exact run may start or end inside a line (the partial-line rule: only
the tokens both places share count, yet the span names the whole line), and windows of one
region merged into one group (`clones._merged`) may hold a line between them that differs (a
docstring word, a comment). Read at the end, from the files, each exact group is:

- kept when every place has the same tokens on its lines (layout and comments aside, as the
  exact runs compare them: a method copied out of a class is still a copy);
- else cut down to its whole lines when only a partial first or last line differs and the rest
  still meets both minimums (the span reported then really is identical);
- else called what it is, `renamed`: the same code once names and literals are set aside.

Then a group whose places are all places of another group of its kind (the same spans, fewer
of them) is not listed again; an exact group inside a renamed or structural one says more and
stays. On networkx, 1,583 of 3,410 exact groups differed in text before this; see
docs/graph.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import partial
from itertools import chain, zip_longest

from ..index.extract import MAX_BYTES
from ..index.source import SourceLines
from ..results import CloneGroup, Occurrence
from .lexer import family, line_tokens

__all__ = ["settle"]


class _Files:
    """The lines of the files a group lists (read once each, inside the root only) and the
    tokens of a line, lexed alone (once per line: nested and overlapping groups share them)."""

    def __init__(self, text: SourceLines, language_of: Callable[[str], str]) -> None:
        self.text, self.language_of = text, language_of
        self.tokens: dict[tuple[str, int], tuple[str, ...]] = {}

    def line(self, path: str, number: int) -> tuple[str, ...]:
        found = self.tokens.get((path, number))
        if found is None:
            text = self.text(path)
            line = text[number - 1] if 0 < number <= len(text) else ""
            found = self.tokens[path, number] = tuple(line_tokens(self.language_of(path), line))
        return found

    def same_text(self, places: Sequence[Occurrence]) -> bool:
        """Whether the places hold the same text, whitespace aside (cheap: no lexing)."""
        if self._same_lines(places):
            return True  # the same lines as written: the same layout, not worked out
        first = self._layout(places[0])
        return all(self._layout(o) == first for o in places[1:])

    def same_tokens(self, places: Sequence[Occurrence]) -> bool:
        """Whether the places hold the same tokens, layout and comments aside; lines are
        lexed only up to the first difference."""
        if self._same_lines(places) and len({self._family(o.path) for o in places}) == 1:
            return True  # the same lines as written, lexed alike: the same tokens, not lexed
        return all(_equal(self._tokens(places[0]), self._tokens(o)) for o in places[1:])

    def _same_lines(self, places: Sequence[Occurrence]) -> bool:
        """Whether the places hold the same lines, character for character (a list compare)."""
        lines = self._lines(places[0])
        return all(self._lines(o) == lines for o in places[1:])

    def _lines(self, o: Occurrence) -> list[str]:
        return self.text(o.path)[o.start - 1 : o.end]

    def _family(self, path: str) -> str:
        return family(self.language_of(path))

    def _layout(self, o: Occurrence) -> list[str]:
        """The place's non-blank lines with their blanks made one space (by `map`, in C)."""
        return list(
            filter(None, map(" ".join, map(str.split, self.text(o.path)[o.start - 1 : o.end])))
        )

    def _tokens(self, o: Occurrence) -> Iterator[str]:
        return chain.from_iterable(map(partial(self.line, o.path), range(o.start, o.end + 1)))


def _equal(one: Iterator[str], two: Iterator[str]) -> bool:
    end = object()
    return all(a == b for a, b in zip_longest(one, two, fillvalue=end))


def settle(
    root: str,
    groups: Sequence[CloneGroup],
    language_of: Callable[[str], str],
    min_lines: int,
    min_tokens: int,
    lines: SourceLines | None = None,
) -> list[CloneGroup]:
    """`groups` (in their order) with every exact group made true to its name, and groups
    whose places another group of their kind lists left out; `lines`: the files' lines when
    the caller has read them already."""
    files = _Files(SourceLines(root, limit=MAX_BYTES) if lines is None else lines, language_of)
    out = [_settled(c, files, min_lines, min_tokens) if c.kind == "exact" else c for c in groups]
    return _without_subsets(out)


def _settled(c: CloneGroup, files: _Files, m: int, min_tokens: int) -> CloneGroup:
    if files.same_text(c.occurrences) or files.same_tokens(c.occurrences):
        return c
    trimmed = _trimmed(c, files, m, min_tokens)
    if trimmed is not None:
        return trimmed
    return CloneGroup("renamed", c.lines, c.tokens, c.occurrences)


def _trimmed(c: CloneGroup, files: _Files, m: int, min_tokens: int) -> CloneGroup | None:
    """The group without its partial first and/or last line, when that leaves the same tokens
    everywhere and both minimums met; else None."""
    heads = [files.line(o.path, o.start) for o in c.occurrences]
    tails = [files.line(o.path, o.end) for o in c.occurrences]
    cut_head, cut_tail = len(set(heads)) > 1, len(set(tails)) > 1
    if not (cut_head or cut_tail):
        return None  # the difference is inside: not a partial line
    places = []
    for o in c.occurrences:
        text = files.text(o.path)
        start, end = o.start + cut_head, o.end - cut_tail
        while start <= end and not text[start - 1].strip():
            start += 1
        while end >= start and not text[end - 1].strip():
            end -= 1
        if end - start + 1 < m:
            return None
        places.append(Occurrence(o.path, start, end))
    if not files.same_tokens(places):
        return None
    # the tokens the partial lines gave: those all the places share at the line's end (start)
    lost = (_shared([h[::-1] for h in heads]) if cut_head else 0) + (
        _shared(tails) if cut_tail else 0
    )
    tokens = c.tokens - lost
    if tokens < min_tokens:
        return None
    return CloneGroup("exact", max(o.end - o.start + 1 for o in places), tokens, tuple(places))


def _shared(token_lists: Sequence[Sequence[str]]) -> int:
    """How many leading tokens all the lists share."""
    k = 0
    for column in zip(*token_lists, strict=False):
        if len(set(column)) > 1:
            break
        k += 1
    return k


def _without_subsets(groups: list[CloneGroup]) -> list[CloneGroup]:
    """Groups less those whose places are all places of another group of the same kind (a
    larger one, or an earlier one of the same places)."""
    places = [frozenset(c.occurrences) for c in groups]
    holders: dict[Occurrence, list[int]] = {}
    for n, found in enumerate(places):
        for o in found:
            holders.setdefault(o, []).append(n)
    out = []
    for n, c in enumerate(groups):
        mine = places[n]
        first = c.occurrences[0]
        others = (k for k in holders[first] if k != n and groups[k].kind == c.kind)
        if not any(mine < places[k] or (mine == places[k] and k < n) for k in others):
            out.append(c)
    return out
