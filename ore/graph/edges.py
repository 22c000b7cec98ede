"""File -> file edges with kinds and weights, from resolved imports and matched names.

Import edges weigh the number of imports from one file into another. Reference edges follow
aider's repo map: a name used in A and defined in B adds `mul * sqrt(uses)`, where `mul` is x10 for
a long specific name, x0.1 for a private one and x0.1 when more than five files define it; unlike
aider and Ori, a name defined by a file that A imports links only there, and a name A defines
itself links nowhere. The sum is squashed into (0, 1) so references inform ranking but one import
still outweighs any pile of references.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Mapping
from itertools import repeat

from .records import Edge, FileIndex
from .resolve import Resolution

__all__ = ["REFERENCE_SCALE", "build_edges", "name_multiplier"]

REFERENCE_SCALE = 0.1
_SPECIFIC = re.compile(r"[a-z][A-Z]|[A-Za-z]_[A-Za-z]")


def name_multiplier(name: str, definers: int) -> float:
    """aider's weighting of one referenced name."""
    mul = 1.0
    if len(name) >= 8 and _SPECIFIC.search(name):
        mul *= 10.0
    if name.startswith("_"):
        mul *= 0.1
    if definers > 5:
        mul *= 0.1
    return mul


def build_edges(files: Mapping[str, FileIndex], resolution: Resolution) -> tuple[Edge, ...]:
    """All edges of the graph, sorted (source, target, kind) so output is stable."""
    rows: list[tuple[str, str, str, float]] = [
        (source, target, "import", float(count))
        for source, counts in resolution.edges.items()
        for target, count in counts.items()
    ]
    definers: dict[str, list[str]] = defaultdict(list)
    defined: dict[str, set[str]] = {}
    for path, record in files.items():
        own = defined[path] = {s.name for s in record.symbols}
        for name in own:
            definers[name].append(path)
    sets: dict[str, frozenset[str]] = {}

    def spots(name: str) -> frozenset[str]:
        found = sets.get(name)
        if found is None:
            found = sets[name] = frozenset(definers[name])
        return found

    base: dict[str, float] = {}  # the name's own part of the multiplier, computed once per name
    sqrt, exp = math.sqrt, math.exp
    no_imports: Mapping[str, int] = {}
    for source, record in files.items():
        if not record.refs:
            continue
        own = defined[source]
        imported = resolution.edges.get(source, no_imports)
        scores: dict[str, float] = {}
        for name, uses in record.refs:
            where = definers.get(name)
            if not where or name in own:
                continue
            mul = base.get(name)
            if mul is None:
                mul = base[name] = name_multiplier(name, 1)
            near = None
            if imported:
                if len(where) > len(imported):  # scan the shorter side; `where` keeps its order
                    hits = {p for p in imported if p in spots(name)}
                    near = [p for p in where if p in hits] if hits else None
                else:
                    near = [p for p in where if p in imported]
            if near:
                targets = near
            else:
                targets = where
                if len(where) > 5:
                    mul *= 0.1
            gain = mul * sqrt(uses)
            for target in targets:
                if target != source:
                    scores[target] = scores.get(target, 0.0) + gain
        for target, score in scores.items():
            rows.append((source, target, "reference", 1.0 - exp(-REFERENCE_SCALE * score)))
    rows.sort()  # (source, target, kind) is unique, so the weight never decides
    return tuple(map(tuple.__new__, repeat(Edge), rows))
