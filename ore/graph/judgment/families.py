"""Which clone groups repeat a finding already made: a group whose places each lie in a
definition (the innermost holding the whole place: a method, a function, a class when the place
runs across its methods) that holds a place of one group listed before it is that group's
family. tomlkit's `Integer` and `Float` wrap each operator the same way, and seven of
`duplicates`' first ten were slices of that one pattern (seed 8311): the first says "these two
classes copy each other", the rest are where. Copies between two other methods of the same
classes are findings of their own (paramiko's `Transport`, a class of 3,000 lines). A repeat is
listed after the groups of its level that are not, never dropped (recall against symilar
counts every group).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..results import CloneGroup
from .cuts import DEFINITIONS

if TYPE_CHECKING:
    from .view import GraphView

__all__ = ["Families"]


class Families:
    """`Families(g).repeats(groups)`: for each group of `groups` (in the order listed), whether
    it repeats the family of a group before it. Each file's top-level definitions are read
    once."""

    def __init__(self, g: GraphView) -> None:
        self._g = g
        self._spans: dict[str, tuple[list[int], list[int]]] = {}

    def _definitions(self, path: str) -> tuple[list[int], list[int]]:
        found = self._spans.get(path)
        if found is None:
            record = self._g.index.files.get(path)
            symbols = record.symbols if record is not None else ()
            spans = sorted((s.line, s.end_line) for s in symbols if s.kind in DEFINITIONS)
            found = self._spans[path] = ([a for a, _ in spans], [b for _, b in spans])
        return found

    def _holders(self, group: CloneGroup) -> frozenset[tuple[str, int]] | None:
        """The innermost definition holding each place; None when a place lies outside every
        one (module-level code is no family)."""
        out = set()
        for o in group.occurrences:
            starts, ends = self._definitions(o.path)
            k = bisect_right(starts, o.start) - 1
            while k >= 0 and ends[k] < o.end:
                k -= 1  # a definition before the place, or one it runs out of
            if k < 0:
                return None
            out.add((o.path, starts[k]))
        return frozenset(out)

    def repeats(self, groups: Sequence[CloneGroup]) -> list[bool]:
        seen: list[frozenset[tuple[str, int]]] = []
        out = []
        for group in groups:
            holders = self._holders(group)
            repeat = holders is not None and any(holders <= earlier for earlier in seen)
            if holders is not None and not repeat:
                seen.append(holders)
            out.append(repeat)
        return out
