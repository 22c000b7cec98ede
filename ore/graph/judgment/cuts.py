"""Where a clone's run is cut: at the edges of definitions.

A renamed run that crosses the edge of a definition (`Edges`: it starts inside one test and ends
inside the next, or joins one model's last line to the next one's head) is two half-copies, not
one copy: it is cut there (`RunCuts`), and each part is reported only when it alone clears the
bars (`runs`). So is an exact run of fewer than `m` whole lines (it reaches the minimum through
blank lines or the partial lines at its ends; a partial line across the edge is left out). An
exact run of `m` whole lines or more is not cut: pylint's `symilar -d 5`, the recall reference,
reports it wherever it is, and cutting those too cost 2.8 points of recall against it on
sqlalchemy (docs/graph.md).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import pairwise

from ..index.extract import MAX_BYTES
from ..index.source import SourceLines
from .lexer import TextLines

__all__ = ["CUTS", "DEFINITIONS", "Edges", "RunCuts", "Span"]

#: Bumped when where a run is cut changes (`Edges`): answers kept before are stale.
CUTS = 5
#: The symbol kinds that are definitions: a renamed run is cut at their edges (`Edges`), and a
#: clone family is told by the ones holding its places (`families`).
DEFINITIONS = frozenset({"class", "function", "method", "interface", "enum"})

#: A run's place: file, first line (index into the view), lines, tokens shared at the end of
#: the line before it and at the start of the line after it.
Span = tuple[int, int, int, int, int]


class Edges:
    """Where the definitions (classes, functions, methods) of each file start and end: `(head,
    first line, last line)`, the head being where a run is cut above it (the first of the
    `@overload` stubs before it, say). A renamed run crossing one of these edges is cut there
    (`RunCuts`). Decorators above a head belong to it (read from the file, only where a run is
    cut)."""

    def __init__(
        self,
        root: str,
        spans: dict[str, Sequence[tuple[int, int, int]]],
        lines: SourceLines | None = None,
    ) -> None:
        self.spans = {path: list(found) for path, found in spans.items() if found}
        self.lines = SourceLines(root, limit=MAX_BYTES) if lines is None else lines

    def cuts(self, files: list[str], views: list[TextLines]) -> RunCuts:
        return RunCuts(self, files, views)

    def decorated(self, path: str, numbers: Sequence[int], k: int, lo: int) -> int:
        """The index of the first decorator line right above code line `k` (`k` itself when
        none), not above `lo`."""
        lines = self.lines(path)
        while k > lo and 0 < numbers[k - 1] <= len(lines):
            if not lines[numbers[k - 1] - 1].lstrip().startswith("@"):
                break
            k -= 1
        return k


class RunCuts:
    """A run's parts: where it crosses the edge of a definition at any of its places (a
    definition it enters or leaves without holding it whole), it is cut, as the run is then the
    end of one test or method and the start of the next, not one copy. A run holding whole
    definitions is one part. An exact run's partial line beyond an edge is left out."""

    def __init__(self, edges: Edges, files: list[str], views: list[TextLines]) -> None:
        self.edges, self.files, self.views = edges, files, views
        self.known: dict[int, tuple[list[tuple[int, int]], list[tuple[int, int]]]] = {}

    def _spans(self, f: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """A file's definitions as `(head, last line)` and as `(last line, first line)`, sorted."""
        found = self.known.get(f)
        if found is None:
            spans = self.edges.spans.get(self.files[f], [])
            heads = sorted((h, e) for h, _s, e in spans)
            found = self.known[f] = (heads, sorted((e, s) for _h, s, e in spans))
        return found

    def __call__(self, places: list[Span]) -> list[list[Span]]:
        n = places[0][2]
        cuts: set[int] = set()
        for f, i, _n, before, after in places:
            starts, ends = self._spans(f)
            if not starts:
                continue
            numbers = self.views[f][0]
            # an exact run's partial lines count: a cut at 0 (at n) leaves the line before
            # (after) out
            first = numbers[i - 1] if before else numbers[i]
            last = numbers[i + n] if after else numbers[i + n - 1]
            # a definition starting inside the run and ending after it: cut above it
            for s, e in starts[
                bisect_right(starts, (first, 1 << 62)) : bisect_right(starts, (last, 1 << 62))
            ]:
                if e > last:
                    k = bisect_left(numbers, s, i, i + n)
                    cuts.add(self.edges.decorated(self.files[f], numbers, k, i) - i)
            # a definition starting before the run and ending inside it: cut below it
            for e, s in ends[bisect_left(ends, (first, -1)) : bisect_left(ends, (last, -1))]:
                if s < first:
                    cuts.add(bisect_right(numbers, e, i, i + n) - i)
        if not cuts:
            return [places]
        edges = sorted(k for k in cuts if 0 < k < n)
        keep_before, keep_after = 0 not in cuts, n not in cuts
        return [
            [
                (
                    f,
                    i + lo,
                    hi - lo,
                    b if lo == 0 and keep_before else 0,
                    a if hi == n and keep_after else 0,
                )
                for f, i, _n, b, a in places
            ]
            for lo, hi in pairwise([0, *edges, n])
        ]
