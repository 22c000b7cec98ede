"""No import cycle inside `ore` at any depth, counting imports made only for type checkers.

import-linter's `acyclic_siblings` contract sees the top-level parts only and skips
`TYPE_CHECKING` imports; this test builds the whole module graph with grimp and looks for a
strongly connected set of modules, so a cycle between two modules of one part fails too.
"""

from __future__ import annotations

import pytest

grimp = pytest.importorskip("grimp")


def _cycles(package: str) -> list[list[str]]:
    graph = grimp.build_graph(package, exclude_type_checking_imports=False, cache_dir=None)
    edges = {
        m: {d for d in graph.find_modules_directly_imported_by(m) if d.split(".")[0] == package}
        for m in graph.modules
    }
    # Tarjan's strongly connected components, iteratively (no recursion limit, no networkx).
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
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
                if len(component) > 1:
                    found.append(sorted(component))
    return found


@pytest.mark.invariant
def test_no_import_cycle_inside_ore_at_any_depth() -> None:
    assert _cycles("ore") == []


def test_the_cycle_finder_sees_a_cycle_through_type_checking(tmp_path, monkeypatch) -> None:
    pkg = tmp_path / "ore_cycle_probe"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import b\n"
    )
    (pkg / "b.py").write_text("from . import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _cycles("ore_cycle_probe") == [["ore_cycle_probe.a", "ore_cycle_probe.b"]]
