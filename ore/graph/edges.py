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
    edges = [
        Edge(source, target, "import", float(count))
        for source, counts in resolution.edges.items()
        for target, count in counts.items()
    ]
    definers: dict[str, list[str]] = defaultdict(list)
    for path, record in files.items():
        for name in {s.name for s in record.symbols}:
            definers[name].append(path)
    for source, record in files.items():
        own = {s.name for s in record.symbols}
        imported: Mapping[str, int] = resolution.edges.get(source, {})
        scores: dict[str, float] = defaultdict(float)
        for name, uses in record.refs:
            where = definers.get(name)
            if not where or name in own:
                continue
            near = [p for p in where if p in imported]
            targets = near or where
            gain = name_multiplier(name, 1 if near else len(where)) * math.sqrt(uses)
            for target in targets:
                if target != source:
                    scores[target] += gain
        for target, score in scores.items():
            weight = 1.0 - math.exp(-REFERENCE_SCALE * score)
            edges.append(Edge(source, target, "reference", weight))
    edges.sort(key=lambda e: (e.source, e.target, e.kind))
    return tuple(edges)
