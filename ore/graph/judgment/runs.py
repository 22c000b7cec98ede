"""Exact and renamed clone groups: runs of equal lines across a tree.

Every window of `seed` consecutive lines is keyed by its lines' keys; windows seen twice or more
(and at most `BUCKET_CAP` times: more is boilerplate) seed pairs of places, which grow both ways
while the keys stay equal, and pairs of equal spans join into groups. A place overlapping an
earlier place of its group (periodic code joins such places through a third) is left out.

Exact clones compare text lines (`FileShape.text_lines`: a docstring is text, as jscpd and
pylint's `symilar` read it) and may start and end inside a line, as jscpd's token matching does:
seeds are two lines shorter than the minimum, and a pair whose run of whole lines falls short of
either minimum takes in the tokens both places share at the end of the line before and at the
start of the line after. The minimum lines then count the clone's span, first line to last.
Renamed clones compare code lines with identifiers and literals normalised, `m` of them at least;
a pair whose text is the same is left to the exact groups.

A run that crosses the edge of a definition is cut there (`cuts`), and each part is reported
only when it alone clears the bars.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from collections.abc import Iterable
from itertools import chain, compress, count, pairwise
from operator import itemgetter

from ..index.extract import MAX_BYTES
from ..index.kinds import is_context
from ..index.source import SourceLines
from ..results import CloneGroup, Occurrence
from .cuts import Edges, RunCuts, Span
from .lexer import TextLines, family, line_tokens
from .shapes import FileShape
from .trivial import few_statements, idiom_run, import_lines, trivial_run

__all__ = ["BUCKET_CAP", "LineEnds", "line_groups"]

BUCKET_CAP = 64  # windows seen more often than this are boilerplate, not clones to report
_PARTIAL = 2  # an exact clone may start and end inside a line: two more lines at most


class LineEnds:
    """The tokens of one line of a file, read from the file (once per file, inside the root
    only) when an exact clone may start or end inside that line."""

    def __init__(
        self, root: str, shapes: dict[str, FileShape], lines: SourceLines | None = None
    ) -> None:
        self.shapes = shapes
        self._lines = SourceLines(root, limit=MAX_BYTES) if lines is None else lines
        self.tokens: dict[tuple[str, int], list[str]] = {}
        self.imported: dict[str, frozenset[int]] = {}

    def imports(self, path: str) -> frozenset[int]:
        """The numbers of the file's lines that are part of an import statement."""
        found = self.imported.get(path)
        if found is None:
            language = family(self.shapes[path].language)
            found = self.imported[path] = import_lines(language, "\n".join(self._lines(path)))
        return found

    def __call__(self, path: str, number: int) -> list[str]:
        found = self.tokens.get((path, number))
        if found is None:
            lines = self._lines(path)
            text = lines[number - 1] if 0 < number <= len(lines) else ""
            shape = self.shapes[path]
            # a text line that is no code line lies wholly inside a multi-line string
            lo, hi = shape.span(number, number)
            prose = bool(shape.text[0]) and lo == hi
            found = self.tokens[path, number] = line_tokens(shape.language, text, prose=prose)
        return found


def line_groups(
    shapes: dict[str, FileShape],
    files: list[str],
    kind: str,
    m: int,
    min_tokens: int,
    ends: LineEnds | None = None,
    edges: Edges | None = None,
) -> list[CloneGroup]:
    """The `kind` ("exact" or "renamed") clone groups of `files`; exact ones with partial lines
    when `ends` can read them; renamed ones, and exact ones of under `m` whole lines, cut where
    they cross a definition's edge (`edges`)."""
    exact = kind == "exact"
    seed = max(2, m - _PARTIAL) if exact and ends is not None else m
    views = [shapes[p].text_lines() if exact else _code_lines(shapes[p]) for p in files]
    keys = [view[1] for view in views]
    texts = _TextKeys(shapes, files)
    buckets, seeds = _seeding_windows(keys, seed)
    spans: dict[Span, set[Span]] = {}
    for found_at in buckets.values():
        for a, (f, i) in enumerate(found_at):
            kf = keys[f]
            for h, j in found_at[a + 1 :]:
                kh = keys[h]
                if (
                    i
                    and j
                    and kf[i - 1] == kh[j - 1]
                    and i - 1 in seeds[f]
                    and not (f == h and j - 1 <= i)
                ):
                    continue  # the window a line up seeded this pair already
                p, q = i, j  # a pair grows both ways: its first lines may be boilerplate
                while p and q and kf[p - 1] == kh[q - 1]:
                    p, q = p - 1, q - 1
                n = seed + i - p
                while p + n < len(kf) and q + n < len(kh) and kf[p + n] == kh[q + n]:
                    n += 1
                if f == h and q < p + n:  # a run that overlaps itself
                    n = q - p
                    if n < seed:
                        continue
                before = after = 0
                if not exact:
                    if texts.of(f, p, n) == texts.of(h, q, n):
                        continue  # an exact clone: reported as one
                elif ends is not None:
                    found = _ends(
                        (views[f], p, files[f]), (views[h], q, files[h]), n, m, min_tokens, ends
                    )
                    if found is None:
                        continue
                    before, after = found
                one, two = (f, p, n, before, after), (h, q, n, before, after)
                spans.setdefault(one, {one}).add(two)
                spans.setdefault(two, {two}).add(one)
    idiom = _Idiom(views, files, ends, m, min_tokens) if exact else None
    cuts = None if edges is None else edges.cuts(files, views)
    return _grouped(views, files, kind, spans, m, min_tokens, idiom, cuts)


def _seeding_windows(
    keys: list[tuple[int, ...]], seed: int
) -> tuple[dict[tuple[int, ...], list[tuple[int, int]]], list[set[int]]]:
    """Where each window rare enough to seed a pair is (`(file, line)` by window), and, per
    file, the lines where such a window starts."""
    # A window can only repeat when each of its lines does: windows are built (in C, by `zip`)
    # only over runs of at least `seed` lines whose keys occur more than once in the tree, found
    # between the lines whose keys occur once. Every step over all lines or all windows is a
    # `map`, `compress` or `Counter` in C; Python steps only per run and per seeding window.
    seen = Counter(chain.from_iterable(keys))
    starts: list[list[int]] = []
    windows: list[list[tuple[int, ...]]] = []
    for seq in keys:
        at: list[int] = []
        found: list[tuple[int, ...]] = []
        alone = compress(count(), map(_ONCE.__eq__, map(seen.__getitem__, seq)))
        for lo, hi in pairwise([-1, *alone, len(seq)]):
            if hi - lo > seed:  # lines lo + 1 .. hi - 1 all repeat
                part = seq[lo + 1 : hi]
                at += range(lo + 1, hi - seed + 1)
                found += zip(*(part[k:] for k in range(seed)), strict=False)
        starts.append(at)
        windows.append(found)
    counts = Counter(chain.from_iterable(windows))
    buckets: dict[tuple[int, ...], list[tuple[int, int]]] = defaultdict(list)
    seeds: list[set[int]] = []
    for f, (at, found) in enumerate(zip(starts, windows, strict=True)):
        rare = list(map(_SEEDING.__contains__, map(counts.__getitem__, found)))
        for i, w in compress(zip(at, found, strict=True), rare):
            buckets[w].append((f, i))
        seeds.append(set(compress(at, rare)))
    return buckets, seeds


_ONCE = 1
#: How often a window is seen for it to seed pairs: twice at least, `BUCKET_CAP` times at most.
_SEEDING = frozenset(range(2, BUCKET_CAP + 1))


def _code_lines(shape: FileShape) -> TextLines:
    return shape.numbers, shape.renamed, shape.tokens


class _TextKeys:
    """The text keys (docstrings as text) of a run of code lines: what tells an exact pair from a
    renamed one."""

    def __init__(self, shapes: dict[str, FileShape], files: list[str]) -> None:
        self.shapes, self.files = shapes, files
        self.starts: dict[int, list[int]] = {}  # per file, each code line's text line index
        self.known: dict[tuple[int, int, int], tuple[int, ...]] = {}  # a place is in many pairs

    def of(self, f: int, i: int, n: int) -> tuple[int, ...]:
        found = self.known.get((f, i, n))
        if found is not None:
            return found
        shape = self.shapes[self.files[f]]
        if not shape.text[0]:  # no multi-line string: the text lines are the code lines
            found = shape.exact[i : i + n]
        else:
            starts = self.starts.get(f)
            if starts is None:
                numbers = shape.text[0]
                starts = self.starts[f] = [bisect_left(numbers, k) for k in shape.numbers]
            last = bisect_right(shape.text[0], shape.numbers[i + n - 1])
            found = shape.text[1][starts[i] : last]
        self.known[f, i, n] = found
        return found


def _ends(
    one: tuple[TextLines, int, str],
    two: tuple[TextLines, int, str],
    n: int,
    m: int,
    min_tokens: int,
    ends: LineEnds,
) -> tuple[int, int] | None:
    """`(before, after)`: the tokens an exact pair of `n` whole lines takes in from the lines
    around it to reach both minimums (none when it meets them alone); None when it cannot."""
    (view_a, i, path_a), (view_b, j, path_b) = one, two
    tokens = sum(view_a[2][i : i + n])  # the same lines: the same tokens on both sides
    if tokens >= min_tokens and _span(view_a, i, n, 0, 0) >= m and _span(view_b, j, n, 0, 0) >= m:
        return 0, 0
    if not (
        _reaches(view_a, i, n, tokens, m, min_tokens)
        and _reaches(view_b, j, n, tokens, m, min_tokens)
    ):
        return None
    before = after = 0
    if i + n < len(view_a[0]) and j + n < len(view_b[0]):
        after = _shared(ends(path_a, view_a[0][i + n]), ends(path_b, view_b[0][j + n]))
    if i and j:
        # a partial first line only adds its line to the span: when even that falls short,
        # no count of shared tokens helps (a third of the pairs that reach this far)
        if min(_span(view_a, i, n, 1, after), _span(view_b, j, n, 1, after)) < m:
            return None
        a, b = ends(path_a, view_a[0][i - 1]), ends(path_b, view_b[0][j - 1])
        before = _shared(reversed(a), reversed(b))
    if tokens + before + after < min_tokens:
        return None
    if min(_span(view_a, i, n, before, after), _span(view_b, j, n, before, after)) < m:
        return None
    return before, after


def _span(view: TextLines, i: int, n: int, before: int, after: int) -> int:
    """Lines from the clone's first line to its last, partial lines included."""
    numbers = view[0]
    first = numbers[i - 1] if before else numbers[i]
    last = numbers[i + n] if after else numbers[i + n - 1]
    return last - first + 1


def _reaches(view: TextLines, i: int, n: int, tokens: int, m: int, min_tokens: int) -> bool:
    """Whether a run of whole lines, with all of the lines around it, could meet both minimums."""
    numbers, _keys, counts = view
    inside = i + n < len(numbers)
    more = (counts[i - 1] if i else 0) + (counts[i + n] if inside else 0)
    return tokens + more >= min_tokens and _span(view, i, n, int(i > 0), int(inside)) >= m


def _shared(one: Iterable[str], two: Iterable[str]) -> int:
    """How many leading tokens two sequences share."""
    k = 0
    for a, b in zip(one, two, strict=False):
        if a != b:
            break
        k += 1
    return k


def _trivial(views: list[TextLines], context: list[bool], places: list[Span]) -> bool:
    """Whether a renamed run is too trivial to report (`trivial.trivial_run`); its renamed keys
    and tokens are the same at every place."""
    f, i, n, _b, _a = places[0]
    _numbers, keys, tokens = views[f]
    only_context = all(context[p[0]] for p in places)
    return trivial_run(keys[i : i + n], tokens[i : i + n], context=only_context)


class _Idiom:
    """Whether an exact run is idiom, not a copy (`trivial.idiom_run`), judged on its whole
    lines (the same at every place); import lines are read from the file (`LineEnds`), only for
    a run of at most `m` whole lines not judged idiom already."""

    def __init__(
        self,
        views: list[TextLines],
        files: list[str],
        ends: LineEnds | None,
        m: int,
        min_tokens: int,
    ) -> None:
        self.views, self.files, self.ends = views, files, ends
        self.m, self.min_tokens = m, min_tokens

    def __call__(self, places: list[Span]) -> bool:
        f, i, n, _b, _a = places[0]
        numbers, _keys, tokens = self.views[f]
        if idiom_run(tokens[i : i + n], min_tokens=self.min_tokens):
            return True
        if self.ends is None or n > self.m:
            return False
        found = self.ends.imports(self.files[f])
        imports = [k in found for k in numbers[i : i + n]]
        return idiom_run(tokens[i : i + n], imports, min_tokens=self.min_tokens, min_lines=self.m)


def _grouped(
    views: list[TextLines],
    files: list[str],
    kind: str,
    spans: dict[Span, set[Span]],
    m: int,
    min_tokens: int,
    idiom: _Idiom | None = None,
    cuts: RunCuts | None = None,
) -> list[CloneGroup]:
    out = []
    context = [is_context(path) for path in files]
    for places in _components(spans):
        kept: list[Span] = []
        for place in places:
            f, i = place[0], place[1]
            if kept and (f, i) < (kept[-1][0], kept[-1][1] + kept[-1][2]):
                continue  # overlaps the place before it: periodic code, joined through others
            kept.append(place)
        if len(kept) < 2:
            continue
        # an exact run of `m` whole lines or more is not cut: symilar reports it (docs/graph.md)
        if cuts is None or (kind == "exact" and kept[0][2] >= m):
            parts = [kept]
        elif kind == "renamed" and _few(views, context, kept):
            continue  # every part of it would be dropped: not cut to find out
        else:
            parts = cuts(kept)
        for part in parts:
            found = _group(views, files, kind, context, part, m, min_tokens, idiom)
            if found is not None:
                out.append(found)
    return out


def _few(views: list[TextLines], context: list[bool], places: list[Span]) -> bool:
    """Whether a renamed run holds too few distinct statements (`trivial.few_statements`): so
    does each part of it, all dropped then (most renamed runs of sqlalchemy's tests are)."""
    f, i, n, _b, _a = places[0]
    only_context = all(context[p[0]] for p in places)
    return few_statements(views[f][1][i : i + n], views[f][2][i : i + n], context=only_context)


def _components(spans: dict[Span, set[Span]]) -> list[list[Span]]:
    """The places linked to each other through pairs, each sorted, in the order of their first
    place: what walking every place in order finds, without sorting every place."""
    seen: set[Span] = set()
    found = []
    for start in spans:
        if start in seen:
            continue
        group, todo = set(), [start]
        while todo:
            span = todo.pop()
            if span not in group:
                group.add(span)
                todo.extend(spans[span] - group)
        seen |= group
        found.append(sorted(group))
    found.sort(key=itemgetter(0))  # groups share no place: no two firsts are equal
    return found


def _group(
    views: list[TextLines],
    files: list[str],
    kind: str,
    context: list[bool],
    kept: list[Span],
    m: int,
    min_tokens: int,
    idiom: _Idiom | None,
) -> CloneGroup | None:
    """The group of a run's places, unless it is trivial or idiom or short of a minimum."""
    if kind == "renamed" and _trivial(views, context, kept):
        return None
    if idiom is not None and idiom(kept):
        return None
    tokens = min(sum(views[f][2][i : i + n]) + b + a for f, i, n, b, a in kept)
    occurrences = []
    for f, i, n, b, a in kept:
        numbers = views[f][0]
        first = numbers[i - 1] if b else numbers[i]
        last = numbers[i + n] if a else numbers[i + n - 1]
        occurrences.append(Occurrence(files[f], first, last))
    lines = [o.end - o.start + 1 for o in occurrences]
    if tokens < min_tokens or min(lines) < m:
        return None
    return CloneGroup(kind, max(lines), tokens, tuple(occurrences))
