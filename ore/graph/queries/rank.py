"""Graph algorithms on plain adjacency dicts: weighted PageRank, HITS, components, paths.

networkx 3.x computes PageRank and HITS with scipy; ORE does not depend on scipy (numpy + scipy
cost ~0.3 s to import, more than the whole computation on a few thousand files), so both are the
textbook power iterations here, matching networkx's definitions (dangling mass spread uniformly,
same tolerance rule). Only Louvain borrows networkx, imported when asked for.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping

__all__ = ["Adjacency", "communities", "hits", "pagerank", "shortest_path", "strong_components"]

Adjacency = Mapping[str, Mapping[str, float]]


def pagerank(
    nodes: list[str],
    out: Adjacency,
    *,
    alpha: float = 0.85,
    tol: float = 1e-6,
    max_iter: int = 100,
    personalization: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """Weighted PageRank (networkx's definition): scores sum to 1.

    `personalization` gives each node's share of the random jumps (and, as in networkx, of the
    dangling nodes' mass); missing nodes get 0, and by default every node gets the same.
    """
    n = len(nodes)
    if n == 0:
        return {}
    totals = {u: sum(out.get(u, {}).values()) for u in nodes}
    jump = _shares(nodes, personalization)
    x = dict.fromkeys(nodes, 1.0 / n)
    for _ in range(max_iter):
        last = x
        dangling = alpha * sum(last[u] for u in nodes if totals[u] == 0)
        x = {u: (dangling + 1.0 - alpha) * jump[u] for u in nodes}
        for u in nodes:
            total = totals[u]
            if total:
                share = alpha * last[u] / total
                for v, w in out[u].items():
                    x[v] += share * w
        if sum(abs(x[u] - last[u]) for u in nodes) < n * tol:
            return x
    return x


def _shares(nodes: list[str], weights: Mapping[str, float] | None) -> dict[str, float]:
    if weights is None:
        return dict.fromkeys(nodes, 1.0 / len(nodes))
    total = sum(weights.get(u, 0.0) for u in nodes)
    if total <= 0:
        raise ValueError("personalization gives no node a positive weight")
    return {u: weights.get(u, 0.0) / total for u in nodes}


def hits(
    nodes: list[str], out: Adjacency, *, tol: float = 1e-8, max_iter: int = 100
) -> tuple[dict[str, float], dict[str, float]]:
    """Weighted HITS (networkx's definition): (hubs, authorities), each summing to 1."""
    n = len(nodes)
    if n == 0:
        return {}, {}
    h = dict.fromkeys(nodes, 1.0 / n)
    a = dict.fromkeys(nodes, 0.0)
    for _ in range(max_iter):
        last = h
        a = dict.fromkeys(nodes, 0.0)
        for u in nodes:
            for v, w in out.get(u, {}).items():
                a[v] += last[u] * w
        h = {u: sum(a[v] * w for v, w in out.get(u, {}).items()) for u in nodes}
        top = max(h.values()) or 1.0
        h = {u: s / top for u, s in h.items()}
        top = max(a.values()) or 1.0
        a = {u: s / top for u, s in a.items()}
        if sum(abs(h[u] - last[u]) for u in nodes) < tol:
            break
    return _normalised(h), _normalised(a)


def _normalised(scores: dict[str, float]) -> dict[str, float]:
    total = sum(scores.values()) or 1.0
    return {u: s / total for u, s in scores.items()}


def strong_components(nodes: list[str], out: Adjacency) -> list[list[str]]:
    """Strongly connected components (iterative Tarjan), each sorted; order is deterministic."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(out.get(start, {}))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(out.get(child, {})))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                found.append(sorted(component))
    return found


def shortest_path(out: Adjacency, source: str, target: str) -> list[str] | None:
    """Fewest-hops path from source to target along edge direction (BFS), or None."""
    if source == target:
        return [source]
    parent: dict[str, str] = {source: source}
    queue = deque([source])
    while queue:
        node = queue.popleft()
        for child in sorted(out.get(node, {})):
            if child in parent:
                continue
            parent[child] = node
            if child == target:
                path = [child]
                while path[-1] != source:
                    path.append(parent[path[-1]])
                return path[::-1]
            queue.append(child)
    return None


def communities(nodes: list[str], out: Adjacency, *, seed: int = 42) -> list[list[str]]:
    """Louvain communities over the undirected graph with summed weights; fixed seed."""
    import networkx as nx  # type: ignore[import-untyped]

    graph = nx.Graph()
    graph.add_nodes_from(nodes)
    for u in nodes:
        for v, w in sorted(out.get(u, {}).items()):
            if u == v:
                continue
            if graph.has_edge(u, v):
                graph[u][v]["weight"] += w
            else:
                graph.add_edge(u, v, weight=w)
    parts = nx.community.louvain_communities(graph, weight="weight", seed=seed)
    groups = [sorted(part) for part in parts]
    groups.sort(key=lambda g: (-len(g), g[0]))
    return groups
