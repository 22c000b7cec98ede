"""No import cycle inside `ore` at any depth, counting imports made only for type checkers.

import-linter's `acyclic_siblings` contract sees the top-level parts only and skips
`TYPE_CHECKING` imports; this test builds the whole module graph with grimp and looks for a
strongly connected set of modules, so a cycle between two modules of one part fails too.
"""

from __future__ import annotations

import pytest

from ore.graph.queries.rank import strong_components  # iterative Tarjan, no networkx

grimp = pytest.importorskip("grimp")


def _cycles(package: str) -> list[list[str]]:
    graph = grimp.build_graph(package, exclude_type_checking_imports=False, cache_dir=None)
    edges = {
        m: {d for d in graph.find_modules_directly_imported_by(m) if d.split(".")[0] == package}
        for m in graph.modules
    }
    out = {m: dict.fromkeys(deps, 1.0) for m, deps in edges.items()}
    return [c for c in strong_components(sorted(edges), out) if len(c) > 1]


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
