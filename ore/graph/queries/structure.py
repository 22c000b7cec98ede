"""Structure queries over the adjacency: the files within some hops of one, and import cycles."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ...errors import GraphError
from ..results import Cycle, Neighbor
from . import rank

__all__ = ["import_cycles", "reach"]


def reach(
    start: str,
    adjacency: Mapping[str, Mapping[str, float]],
    depth: int,
    *,
    reverse: bool,
    kinds_between: Callable[[str, str], tuple[str, ...]],
) -> list[Neighbor]:
    """The files `adjacency` reaches from `start` within `depth` hops, by depth then weight:
    each with the heaviest edge that reached it and the kinds of that edge (read forwards, from
    source to target, when `reverse` walks the edges backwards)."""
    if depth < 1:
        raise GraphError(f"depth must be 1 or more, not {depth}")
    seen: dict[str, Neighbor] = {}
    frontier = [start]
    for level in range(1, depth + 1):
        reached: dict[str, tuple[float, str]] = {}
        for node in frontier:
            for other, weight in adjacency[node].items():
                if other == start or other in seen:
                    continue
                if other not in reached or weight > reached[other][0]:
                    reached[other] = (weight, node)
        for other, (weight, via) in reached.items():
            key = (other, via) if reverse else (via, other)
            seen[other] = Neighbor(other, round(weight, 6), level, kinds_between(*key))
        frontier = sorted(reached)
        if not frontier:
            break
    return sorted(seen.values(), key=lambda n: (n.depth, -n.weight, n.path))


def import_cycles(
    files: list[str],
    imports: Mapping[str, Mapping[str, float]],
    runtime: Mapping[str, Mapping[str, float]] | None = None,
) -> list[Cycle]:
    """Strongly connected components of import edges, each with one concrete loop, largest
    first. `runtime`: the edges of `imports` that run at import time, when `imports` holds
    deferred ones too (in a function, typing-only); a component's loop is then one of them
    when it has any, and says which it is."""
    found = []
    for component in rank.strong_components(files, imports):
        if len(component) == 1 and component[0] not in imports[component[0]]:
            continue
        loop = None if runtime is None else _runtime_loop(component, runtime)
        runs = runtime is None or loop is not None
        if loop is None:
            loop = _cycle_through(component[0], _within(component, imports))
        found.append(Cycle(tuple(component), tuple(loop), runs))
    found.sort(key=lambda c: (-len(c.files), c.files))
    return found


def _within(
    component: list[str], imports: Mapping[str, Mapping[str, float]]
) -> dict[str, dict[str, float]]:
    """The edges of `imports` between files of `component`."""
    members = set(component)
    return {u: {v: w for v, w in imports[u].items() if v in members} for u in component}


def _runtime_loop(
    component: list[str], runtime: Mapping[str, Mapping[str, float]]
) -> list[str] | None:
    """A loop of runtime imports inside `component` (through the first file of its largest
    runtime component), or None when it closes only through deferred imports."""
    inner = _within(component, runtime)
    cores = [
        core
        for core in rank.strong_components(component, inner)
        if len(core) > 1 or core[0] in inner[core[0]]
    ]
    if not cores:
        return None
    core = min(cores, key=lambda c: (-len(c), c))
    return _cycle_through(core[0], _within(core, inner))


def _cycle_through(start: str, inner: dict[str, dict[str, float]]) -> list[str]:
    if start in inner[start]:
        return [start, start]
    best = None
    for first in sorted(inner[start]):
        back = rank.shortest_path(inner, first, start)
        if back is not None and (best is None or len(back) < len(best)):
            best = back
    return [start, *best] if best else [start]
