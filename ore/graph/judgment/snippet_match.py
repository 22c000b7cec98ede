"""Where a snippet already exists: the one question of the duplicates asked of given code, not
of the whole tree (`clones`), so it needs none of the pairing of runs nor the grouping.

A snippet (`match_snippet`) is compared with every function (and, outside functions, the file) of
its language: the candidates sharing a non-trivial line, and the functions of the same shape.
The score compares renamed lines: `2M / (len(snippet) + len(unit))`, `M` the lines matched in
order; when at least three lines match, the snippet may also sit inside a larger unit, scored
`2M / (len(snippet) + len(span))` over the unit's lines from the first match to the last. A
structural match (same function shape) scores at least 0.8; matches under 0.5 are dropped.
"""

from __future__ import annotations

from bisect import bisect_left
from difflib import SequenceMatcher
from itertools import compress, count
from typing import TYPE_CHECKING

from ..index.source import text_lines
from ..results import SnippetMatch
from .lexer import family
from .lineindex import kept
from .scope import dominant_language, need_files, select
from .shapecache import load_shapes
from .shapes import FileShape, snippet_shape, snippet_text
from .similar_name import SharedWords, text_words

if TYPE_CHECKING:
    from .view import GraphView

__all__ = ["match_snippet"]

_KIND_ORDER = {"exact": 0, "renamed": 1, "structural": 2, "similar": 3}
_TRIVIAL_TOKENS = 4  # lines this short (`)`, `else:`, `return x`) never seed a snippet match
_MIN_SCORE = 0.5
_CONTAINED = 3  # lines matched in order before a snippet counts as found inside a larger unit


def match_snippet(
    g: GraphView,
    snippet: str | bytes,
    *,
    language: str | None = None,
    limit: int | None = 10,
    exclude_tests: bool = False,
) -> list[SnippetMatch]:
    """Where the snippet (or code like it) already is: best matches first."""
    lang = dominant_language(g, language)
    snip = snippet_shape(snippet, lang)
    fam = family(lang)
    candidates = [
        p
        for p in select(g, exclude_tests=exclude_tests)
        if family(g.index.files[p].language) == fam
    ]
    need_files(g, candidates, "a snippet comparison")
    shapes = load_shapes(g, candidates, lean=True)
    s_renamed, s_exact = list(snip.renamed), list(snip.exact)
    seeds = {r for r, t in zip(snip.renamed, snip.tokens, strict=True) if t >= _TRIVIAL_TOKENS}
    snippet_shapes = {fn.shape for fn in snip.functions if fn.shape}
    found: dict[tuple[str, int, int], SnippetMatch] = {}
    copies = _whole_copies(shapes, s_exact)  # even of a table no line of which is a seed
    for copy in copies:
        found[copy.path, copy.start, copy.end] = copy
    whole = {copy.path for copy in copies}  # said: not compared line by line again
    index = kept(g.root, _TRIVIAL_TOKENS)  # a long-lived process: the files holding a seed
    paths = sorted(shapes) if index is None else index.files_with(shapes, seeds, snippet_shapes)
    known = set(s_renamed)
    for path in paths:
        if path in whole:
            continue  # a 20,000-row table copied whole took a minute to compare again
        shape = shapes[path]
        renamed, numbers = shape.renamed, shape.numbers
        # the file's lines whose key is one of the snippet's (seeds are among them), found by
        # a pass in C: it runs over every line of every candidate file, each call
        shared = list(compress(count(), map(known.__contains__, renamed)))
        hits = [numbers[i] for i in shared if renamed[i] in seeds]  # in line order
        units = []
        for fn in shape.functions:
            same = fn.shape in snippet_shapes
            at = bisect_left(hits, fn.start)
            if same or (at < len(hits) and hits[at] <= fn.end):
                units.append((fn.start, fn.end, fn.name, same))
        if any(not any(s <= n <= e for s, e, _n, _x in units) for n in hits):
            units.append((1, shape.numbers[-1], "", False))  # module-level code
        for start, end, name, same in units:
            if not same and 3 * _matchable(shape, start, end, shared) < len(s_renamed):
                continue  # too few of the snippet's lines to reach _MIN_SCORE: not scored
            match = _score(shape, start, end, name, s_renamed, s_exact, same)
            if match is not None:
                key = (match.path, match.start, match.end)
                if key not in found or found[key].score < match.score:
                    found[key] = match
    ranked = sorted(
        found.values(), key=lambda m_: (-m_.score, _KIND_ORDER[m_.kind], m_.path, m_.start)
    )
    return _ties_by_words(g, _innermost(ranked), snippet, limit)[:limit]


def _whole_copies(shapes: dict[str, FileShape], s_exact: list[int]) -> list[SnippetMatch]:
    """The files the snippet is a verbatim copy of, every line the same: found by comparing
    line keys, not through seeds. A copy of pygments' `_lasso_builtins.py`, a table of short
    strings none of which seeds a match, was "no code like the snippet"."""
    if not s_exact:
        return []
    return [
        SnippetMatch(path, shape.numbers[0], shape.numbers[-1], "", "exact", 1.0)
        for path, shape in shapes.items()
        if len(shape.exact) == len(s_exact) and list(shape.exact) == s_exact
    ]


def _ties_by_words(
    g: GraphView, ranked: list[SnippetMatch], snippet: str | bytes, limit: int | None
) -> list[SnippetMatch]:
    """Matches of one score and kind ordered by the words their text shares with the
    snippet's (`similar_name.SharedWords`), then by place: a renamed copy of a one-line getter
    has the shape of every getter, and its original is the one whose names and docstring still
    say what the copy says. Only the ties that reach the first `limit` are read."""
    end = len(ranked) if limit is None else min(limit, len(ranked))
    if end == 0:
        return ranked
    tied = {
        (m.score, m.kind)
        for i, m in enumerate(ranked)
        if i < end
        and (
            (i + 1 < len(ranked) and (ranked[i + 1].score, ranked[i + 1].kind) == (m.score, m.kind))
            or (i > 0 and (ranked[i - 1].score, ranked[i - 1].kind) == (m.score, m.kind))
        )
    }
    if not tied:
        return ranked
    words = SharedWords(g, text_words(text_lines(snippet_text(snippet))))

    def shared(m: SnippetMatch) -> float:
        return words(m.path, m.start, m.end) if (m.score, m.kind) in tied else 0.0

    return sorted(
        ranked, key=lambda m: (-m.score, _KIND_ORDER[m.kind], -shared(m), m.path, m.start)
    )


def _matchable(shape: FileShape, start: int, end: int, shared: list[int]) -> int:
    """How many lines of the unit (`start`..`end`) could match the snippet's (`shared`: the
    file's lines whose renamed key is one of the snippet's). The score's `M` is at most that,
    and a score of 0.5 needs `3M >= len(snippet)` (`2M / (len(snippet) + M)`, the best a unit
    or a span of it can give), so a unit below it is never scored."""
    lo, hi = shape.span(start, end)
    return bisect_left(shared, hi) - bisect_left(shared, lo)


def _score(
    shape: FileShape,
    start: int,
    end: int,
    name: str,
    s_renamed: list[int],
    s_exact: list[int],
    same_shape: bool,
) -> SnippetMatch | None:
    lo, hi = shape.span(start, end)
    renamed = shape.renamed[lo:hi]
    matcher = SequenceMatcher(None, s_renamed, renamed, autojunk=False)
    blocks = [b for b in matcher.get_matching_blocks() if b.size]
    if not blocks and not same_shape:
        return None
    if blocks:
        first, last = blocks[0].b, blocks[-1].b + blocks[-1].size
        matched = sum(b.size for b in blocks)
        score = 2 * matched / (len(s_renamed) + hi - lo)  # against the whole unit
        if matched >= _CONTAINED:  # or the snippet inside a larger unit, lines in order
            score = max(score, 2 * matched / (len(s_renamed) + last - first))
    else:
        first, last, score = 0, hi - lo, 0.0
    kind = "similar"
    if list(renamed[first:last]) == s_renamed:
        exact = list(shape.exact[lo + first : lo + last]) == s_exact
        kind = "exact" if exact else "renamed"
    elif same_shape:
        kind, score = "structural", max(score, 0.8)
        first, last = 0, hi - lo
    if score < _MIN_SCORE or last <= first:
        return None
    numbers = shape.numbers
    return SnippetMatch(
        shape.path, numbers[lo + first], numbers[lo + last - 1], name, kind, round(score, 4)
    )


def _innermost(ranked: list[SnippetMatch]) -> list[SnippetMatch]:
    """One match per place: a nested function's match hides the same lines found again in the
    function around it (same score and kind)."""
    out: list[SnippetMatch] = []
    for m in ranked:
        if any(
            o.path == m.path
            and o.kind == m.kind
            and o.score == m.score
            and o.start >= m.start
            and o.end <= m.end
            for o in out
        ):
            continue
        out.append(m)
    return out
