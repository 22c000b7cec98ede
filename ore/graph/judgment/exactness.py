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

from collections.abc import Callable, Sequence

from ..index.extract import MAX_BYTES
from ..index.source import read_source
from ..results import CloneGroup, Occurrence
from .shapes import line_tokens

__all__ = ["settle"]

Lines = Callable[[str], list[str]]


def settle(
    root: str,
    groups: Sequence[CloneGroup],
    language_of: Callable[[str], str],
    min_lines: int,
    min_tokens: int,
) -> list[CloneGroup]:
    """`groups` (in their order) with every exact group made true to its name, and groups
    whose places another group lists already left out."""
    cache: dict[str, list[str]] = {}

    def lines(path: str) -> list[str]:
        found = cache.get(path)
        if found is None:
            data = read_source(root, path, limit=MAX_BYTES) or b""
            found = cache[path] = data.decode("utf-8", "replace").split("\n")
        return found

    out = [
        _settled(c, lines, language_of, min_lines, min_tokens) if c.kind == "exact" else c
        for c in groups
    ]
    return _without_subsets(out)


def _text(lines: list[str], o: Occurrence, language: str) -> tuple[str, ...]:
    """A place's tokens, every line of it lexed whole: layout and comments aside."""
    return tuple(t for line in lines[o.start - 1 : o.end] for t in line_tokens(language, line))


def _settled(
    c: CloneGroup, lines: Lines, language_of: Callable[[str], str], m: int, min_tokens: int
) -> CloneGroup:
    texts = {_text(lines(o.path), o, language_of(o.path)) for o in c.occurrences}
    if len(texts) == 1:
        return c
    trimmed = _trimmed(c, lines, language_of, m, min_tokens)
    if trimmed is not None:
        return trimmed
    return CloneGroup("renamed", c.lines, c.tokens, c.occurrences)


def _trimmed(
    c: CloneGroup, lines: Lines, language_of: Callable[[str], str], m: int, min_tokens: int
) -> CloneGroup | None:
    """The group without its partial first and/or last line, when that leaves the same text
    everywhere and both minimums met; else None."""
    language = language_of(c.occurrences[0].path)
    heads = {tuple(line_tokens(language, lines(o.path)[o.start - 1])) for o in c.occurrences}
    tails = {tuple(line_tokens(language, lines(o.path)[o.end - 1])) for o in c.occurrences}
    cut_head, cut_tail = len(heads) > 1, len(tails) > 1
    if not (cut_head or cut_tail):
        return None  # the difference is inside: not a partial line
    places, lost = [], 0
    for o in c.occurrences:
        text = lines(o.path)
        start, end = o.start + cut_head, o.end - cut_tail
        while start <= end and not text[start - 1].strip():
            start += 1
        while end >= start and not text[end - 1].strip():
            end -= 1
        if end - start + 1 < m:
            return None
        places.append(Occurrence(o.path, start, end))
    if len({_text(lines(o.path), o, language) for o in places}) > 1:
        return None
    if cut_head:
        lost += _shared(
            [line_tokens(language, lines(o.path)[o.start - 1])[::-1] for o in c.occurrences]
        )
    if cut_tail:
        lost += _shared([line_tokens(language, lines(o.path)[o.end - 1]) for o in c.occurrences])
    tokens = c.tokens - lost
    if tokens < min_tokens:
        return None
    return CloneGroup("exact", max(o.end - o.start + 1 for o in places), tokens, tuple(places))


def _shared(token_lists: list[list[str]]) -> int:
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
