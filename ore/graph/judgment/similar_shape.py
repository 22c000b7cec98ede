"""Similar by shape: functions whose syntax tree has the same shape once docstrings and
annotations are set aside (1.0: a renamed copy), else the geometric mean of the cosine of their
node kind counts (times the ratio of their sizes) and how alike their code lines are in order
once names are normalised.

Equal scores are ordered by the words the two functions' text shares
(`similar_name.SharedWords`): a one-line getter has the shape of every getter of the tree, and
of them the original of a renamed copy is the one whose names and docstring still say what the
copy says (`self._keys`, "keys").
"""

from __future__ import annotations

import math
from difflib import SequenceMatcher
from typing import TYPE_CHECKING

from ..results import SimilarMatch
from .function_shapes import Function
from .lexer import family
from .scope import select
from .shapecache import load_shapes
from .shapes import FileShape
from .similar_name import SharedWords

if TYPE_CHECKING:
    from .view import GraphView

__all__ = ["by_shape", "lines_of"]

_MIN_SCORE = 0.6


def lines_of(shape: FileShape, fn: Function) -> tuple[int, ...]:
    lo, hi = shape.span(fn.start, fn.end)
    return shape.renamed[lo:hi]


def by_shape(
    g: GraphView,
    anchor: Function,
    lines: tuple[int, ...],
    at: str,
    language: str,
    words: frozenset[str] = frozenset(),
) -> list[SimilarMatch]:
    """Same tree shape: 1.0. Else the geometric mean of two likenesses, so that neither alone
    passes: node-kind counts (cosine, times the size ratio) and the code lines in order once
    names are normalised (`difflib`'s ratio of renamed line keys): a near-copy with a line
    added has both, a function that merely uses the same kinds of nodes has only the first.

    Returned in order: the score, then, among equal scores, the words shared with `words`
    (the anchor's `text_words`), then where they are."""
    fam = family(language)
    paths = [p for p in select(g) if family(g.index.files[p].language) == fam]
    kinds = dict(anchor.profile)
    norm = math.sqrt(sum(v * v for v in kinds.values())) or 1.0
    matcher = SequenceMatcher[int](None, (), (), autojunk=False)
    matcher.set_seq2(lines)
    out = []
    ends: dict[tuple[str, int], int] = {}  # each answer's last line, for its words
    for path, shape in load_shapes(g, paths).items():
        symbols = {s.line: s for s in g.index.files[path].symbols}
        for fn in shape.functions:
            if not fn.shape or (path == at and fn.start == anchor.start):
                continue
            size = min(fn.nodes, anchor.nodes) / max(fn.nodes, anchor.nodes, 1)
            if size < _MIN_SCORE:
                continue
            if fn.shape == anchor.shape:
                score, reason = 1.0, "same syntax tree shape"
            else:
                other = dict(fn.profile)
                dot = sum(v * other.get(k, 0) for k, v in kinds.items())
                length = math.sqrt(sum(v * v for v in other.values())) or 1.0
                alike = dot / (norm * length) * size
                if alike < _MIN_SCORE:
                    continue
                matcher.set_seq1(lines_of(shape, fn))
                same_lines = matcher.ratio()
                score = math.sqrt(alike * same_lines)
                reason = f"{same_lines:.0%} of the lines alike, {fn.nodes} syntax nodes"
            if score >= _MIN_SCORE:
                s = symbols.get(fn.start)
                kind = s.kind if s else "function"
                sig = s.signature if s else ""
                out.append(
                    SimilarMatch(
                        fn.name or "<anonymous>", kind, path, fn.start, sig, round(score, 4), reason
                    )
                )
                ends[path, fn.start] = fn.end
    return _ordered(out, ends, SharedWords(g, words))


def _ordered(
    found: list[SimilarMatch], ends: dict[tuple[str, int], int], shared: SharedWords
) -> list[SimilarMatch]:
    """`found` by score, equal scores by the words they share with the anchor, then by place."""
    counts: dict[float, int] = {}
    for m in found:
        counts[m.score] = counts.get(m.score, 0) + 1

    def words(m: SimilarMatch) -> float:
        return shared(m.path, m.line, ends[m.path, m.line]) if counts[m.score] > 1 else 0.0

    return sorted(found, key=lambda m: (-m.score, -words(m), m.path, m.line, m.name))
