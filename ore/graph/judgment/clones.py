"""Duplicate code: clone groups across a tree.

Repo-wide (`find_clones`): exact and renamed groups are runs of equal lines (`runs`: exact ones
compare text lines, docstrings included, and may start and end inside a line; renamed ones compare
code lines once identifiers and literals are normalised); structural clones are whole functions
whose syntax trees have the same shape without being renamed copies. A group is kept when it
spans at least `min_lines` lines and `min_tokens` tokens, and a renamed one is not too trivial to
report (`trivial`: a table, under four distinct statements, mostly differing docstrings).

So that a long clone is one answer, not a flood of its windows (`_unflooded`): groups of one
kind over the same files whose places overlap pairwise are merged into one group of the union
spans, and a group whose every place lies inside a distinct place of a larger group is dropped;
so is a renamed group of under one token per four lines (`trivial.mostly_prose`).
Groups with a place in library code come before groups found only in tests, examples and docs
(`index.kinds.is_context`): context repeats itself by design; at each level, groups of code
before groups that copy no code (`non_code`: prose, signatures, data tables), and a group of
a family already listed after the rest (`families`). A Python stub
beside its module (`more.pyi` by `more.py`) is not searched unless named: its `@overload`
ladders repeat parameter lists by design, and its module holds the code.

Where a given snippet already is: `snippet_match`, which needs none of this.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from collections import defaultdict
from collections.abc import Sequence
from functools import cache
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from ...errors import GraphError
from ..index.extract import MAX_BYTES
from ..index.kinds import is_context, stub_beside_module
from ..index.pool import PARALLEL_MIN, aside
from ..index.source import SourceLines
from ..index.stored import paused_gc
from ..results import CloneGroup, Occurrence
from . import trivial
from .cuts import CUTS, DEFINITIONS, Edges
from .exactness import settle
from .families import Families
from .memo import remembered
from .non_code import NonCode
from .runs import LineEnds, line_groups
from .scope import select
from .shapecache import held_writes, load_shapes
from .shapes import FileShape
from .trivial import mostly_prose

if TYPE_CHECKING:
    from .view import GraphView

__all__ = ["KINDS", "MIN_TOKENS", "find_clones"]

KINDS = ("exact", "renamed", "structural")
#: The default token minimum: with 5 lines it finds 97-100% of the groups pylint's `symilar -d 5`
#: finds on httpx, click, rich and attrs (50 found 0-96%); see docs/graph.md.
MIN_TOKENS = 15
#: A syntax shape this small is common code, not a copy: structural groups need this many
#: tokens whatever the minimum asked (shapes set docstrings and annotations aside).
_STRUCTURAL_TOKENS = 50
_KIND_ORDER = {"exact": 0, "renamed": 1, "structural": 2}
_UNFLOODED = 19  # bumped when what `_unflooded` keeps changes: answers kept before are stale


def find_clones(
    g: GraphView,
    *,
    min_lines: int = 5,
    min_tokens: int = MIN_TOKENS,
    paths: Sequence[str] = (),
    exclude_tests: bool = False,
    kinds: Sequence[str] = KINDS,
) -> list[CloneGroup]:
    """Clone groups under `paths` (all files when empty), library first, most tokens first."""
    if min_lines < 2:
        raise GraphError(f"min_lines must be 2 or more, not {min_lines}")
    if min_tokens < 1:
        raise GraphError(f"min_tokens must be 1 or more, not {min_tokens}")
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        raise GraphError(f"unknown clone kind '{unknown[0]}'; use {', '.join(KINDS)}")
    selected = sorted(
        p
        for p in select(g, paths, exclude_tests=exclude_tests)
        if p in paths or not stub_beside_module(p, g.index.files)
    )
    wanted = tuple(k for k in KINDS if k in kinds)

    def compute() -> list[CloneGroup]:
        with held_writes(g.root) as writes:  # written after the exact pairing, not before it
            shapes = load_shapes(g, selected, lean=True)  # no facts nor profiles: not compared
        groups: list[CloneGroup] = []
        files = sorted(shapes)
        lines = SourceLines(g.root, limit=MAX_BYTES)  # each file read once for every part below
        edges = Edges(str(g.root), {p: _definitions(g, p) for p in files}, lines)

        def others() -> list[CloneGroup]:
            found: list[CloneGroup] = []
            if "renamed" in wanted:
                found += line_groups(shapes, files, "renamed", min_lines, min_tokens, edges=edges)
            if "structural" in wanted:
                found += _structural(shapes, files, min_lines, min_tokens)
            return found

        # renamed and structural groups on another core while this one pairs the exact runs,
        # whatever the load: with the collector paused the fork costs next to nothing (the
        # child no longer walks, and so copies, every object), and a busy machine shares its
        # cores among processes, two of them ours
        both = "exact" in wanted and len(files) >= PARALLEL_MIN
        with aside(others, _clone_rows, _clone_groups, wanted=both) as rest:
            if "exact" in wanted:
                ends = LineEnds(str(g.root), shapes, lines)
                groups += line_groups(shapes, files, "exact", min_lines, min_tokens, ends, edges)
            # the shapes file, for the next query: here, while the child still pairs (the
            # renamed pairing takes longer than the exact one), not on the child's path
            for write in writes:
                write()
            groups += rest()
        groups.sort(key=_largest_first)
        kept = _unflooded([c for c in groups if not mostly_prose(c.kind, c.tokens, c.lines)])
        # an exact group is the same text everywhere; a subset of another's places is no group
        kept = settle(str(g.root), kept, lambda p: shapes[p].language, min_lines, min_tokens, lines)
        kept = [c for c in kept if c.kind in wanted]  # `--kind exact`: no exact run found renamed
        context = cache(is_context)  # once per path, not per place of every group

        after_code = NonCode(shapes, lines)  # prose, signatures, tables: after copied code
        levels = {id(c): (all(context(o.path) for o in c.occurrences), after_code(c)) for c in kept}
        kept.sort(key=lambda c: (*levels[id(c)], *_heaviest(c)))
        # at each level, a group of a family already listed after the rest (`families`)
        repeats = Families(g).repeats(kept)
        again = {id(c) for c, r in zip(kept, repeats, strict=True) if r}
        kept.sort(key=lambda c: (*levels[id(c)], id(c) in again))  # stable: heaviest first
        return kept

    # the same files with the same contents give the same groups: kept by content (`memo`)
    params = (min_lines, min_tokens, wanted, _UNFLOODED, trivial.RULES, CUTS)
    # the pairing makes millions of tuples and sets and no cycles: each full collection
    # walked them all (about 2.5 s of a cold `duplicates` on sqlalchemy, freeing nothing)
    with paused_gc():
        return remembered(g, "clones", params, selected, compute, _clone_rows, _clone_groups)


def _definitions(g: GraphView, path: str) -> list[tuple[int, int, int]]:
    """A file's definitions of more than one line (`cuts.Edges`): head, first and last line;
    the head is the first of the definitions of its name right above it (`@overload` stubs)."""
    record = g.index.files.get(path)
    if record is None:
        return []
    symbols = sorted(
        (s for s in record.symbols if s.kind in DEFINITIONS), key=lambda s: (s.line, -s.end_line)
    )
    out = []
    for n, s in enumerate(symbols):
        if s.end_line <= s.line:
            continue
        head, k = s.line, n
        while k and symbols[k - 1].name == s.name and symbols[k - 1].end_line >= head - 3:
            k -= 1
            head = symbols[k].line
        out.append((head, s.line, s.end_line))
    return out


def _clone_rows(groups: list[CloneGroup]) -> tuple[object, ...]:
    return tuple(
        (c.kind, c.lines, c.tokens, tuple((o.path, o.start, o.end) for o in c.occurrences))
        for c in groups
    )


def _clone_groups(rows: tuple[Any, ...]) -> list[CloneGroup]:
    return [
        CloneGroup(str(kind), int(lines), int(tokens), tuple(Occurrence(*o) for o in found))
        for kind, lines, tokens, found in rows
    ]


def _largest_first(c: CloneGroup) -> tuple[int, int, int, str, int]:
    first = c.occurrences[0]
    return (-c.lines, -c.tokens, _KIND_ORDER[c.kind], first.path, first.start)


def _heaviest(c: CloneGroup) -> tuple[int, int, int, str, int]:
    """The order answers are shown in: most tokens first, as real code weighs more than the lines
    a run of stubs under differing docstrings spans (sqlalchemy's event hooks, operators)."""
    first = c.occurrences[0]
    return (-c.tokens, -c.lines, _KIND_ORDER[c.kind], first.path, first.start)


def _unflooded(groups: list[CloneGroup]) -> list[CloneGroup]:
    """`groups` (largest first) with overlapping windows of one region merged and groups nested
    in a larger one dropped; largest first."""
    merged = sorted(_merged(groups), key=_largest_first)
    starts: dict[str, list[tuple[int, int, int]]] = defaultdict(list)  # start, end, group
    longest: dict[str, int] = defaultdict(int)
    kept: list[CloneGroup] = []
    for group in merged:
        if not _nested(group, kept, starts, longest):
            for o in group.occurrences:
                insort(starts[o.path], (o.start, o.end, len(kept)))
                longest[o.path] = max(longest[o.path], o.end - o.start)
            kept.append(group)
    return kept


def _nested(
    group: CloneGroup,
    kept: list[CloneGroup],
    starts: dict[str, list[tuple[int, int, int]]],
    longest: dict[str, int],
) -> bool:
    """Whether every place of `group` lies inside a distinct place of one group kept before."""
    first = group.occurrences[0]
    here = starts.get(first.path, [])
    reach = first.start - longest.get(first.path, 0)
    k = bisect_right(here, (first.start, 1 << 62, 1 << 62))
    seen: set[int] = set()
    while k > 0 and here[k - 1][0] >= reach:
        k -= 1
        _start, end, n = here[k]
        if end < first.end or n in seen:
            continue
        seen.add(n)
        outer = kept[n].occurrences
        inside = {
            next(
                (
                    j
                    for j, b in enumerate(outer)
                    if b.path == o.path and b.start <= o.start and b.end >= o.end
                ),
                -1,
            )
            for o in group.occurrences
        }
        if -1 not in inside and len(inside) == len(group.occurrences):
            return True
    return False


def _merged(groups: list[CloneGroup]) -> list[CloneGroup]:
    """Groups over the same files whose places overlap or touch pairwise (windows of one region
    that grew apart, an exact run beside a renamed one) as one group of the union spans, its
    tokens the most of any; renamed when exact and renamed runs join. Structural groups (whole
    functions) join only each other."""
    buckets: dict[tuple[str, tuple[str, ...]], list[CloneGroup]] = defaultdict(list)
    for c in groups:
        lines = "structural" if c.kind == "structural" else "lines"
        buckets[lines, tuple(o.path for o in c.occurrences)].append(c)
    out: list[CloneGroup] = []
    for members in buckets.values():
        members.sort(key=lambda c: tuple(o.start for o in c.occurrences))
        current = members[0]
        for c in members[1:]:
            joined = _join(current, c)
            if joined is None:
                out.append(current)
                current = c
            else:
                current = joined
        out.append(current)
    return out


def _join(one: CloneGroup, two: CloneGroup) -> CloneGroup | None:
    """One group of both when each place of `two` overlaps the same place of `one` and the
    union places stay apart in each file; else None."""
    places = []
    for a, b in zip(one.occurrences, two.occurrences, strict=True):
        if b.start > a.end + 1 or a.start > b.end + 1:
            return None
        places.append(Occurrence(a.path, min(a.start, b.start), max(a.end, b.end)))
    for a, b in pairwise(places):
        if a.path == b.path and b.start <= a.end:
            return None  # periodic code: the union places would overlap each other
    lines = max(o.end - o.start + 1 for o in places)
    kind = one.kind if one.kind == two.kind else "renamed"  # an exact run next to a renamed one
    return CloneGroup(kind, lines, max(one.tokens, two.tokens), tuple(places))


def _structural(
    shapes: dict[str, FileShape], files: list[str], m: int, min_tokens: int
) -> list[CloneGroup]:
    by_shape: dict[str, list[tuple[str, int, int, tuple[int, ...], int]]] = defaultdict(list)
    for path in files:
        shape = shapes[path]
        for fn in shape.functions:
            if not fn.shape or fn.end - fn.start + 1 < m:
                continue
            lo, hi = shape.span(fn.start, fn.end)
            tokens = sum(shape.tokens[lo:hi])
            if tokens >= max(min_tokens, _STRUCTURAL_TOKENS):
                by_shape[fn.shape].append((path, fn.start, fn.end, shape.renamed[lo:hi], tokens))
    out = []
    for members in by_shape.values():
        if len(members) < 2 or len({m_[3] for m_ in members}) < 2:
            continue  # alone, or all renamed copies of each other (reported as such)
        occurrences = tuple(Occurrence(p, s, e) for p, s, e, _r, _t in sorted(members))
        size = max(o.end - o.start + 1 for o in occurrences)
        out.append(CloneGroup("structural", size, min(t for *_x, t in members), occurrences))
    return out
