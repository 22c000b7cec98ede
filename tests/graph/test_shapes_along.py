"""Shapes made by the index's workers as they parse (`open_graph(shapes=True)`, what a cold
`duplicates` asks for): each file parsed once, and the same shapes and clone groups as shapes
made afterwards on their own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ore.graph.index import extract, languages, pool

_FUNC = """def {name}(orders, currency, limit):
    \"\"\"Pick the orders.\"\"\"
    seen, total = [], {n}
    step = orders.pick(1, currency) + limit
    if step > limit and not seen:
        limit = min(step, limit * {n})
    seen.append((step, currency))
    for item in orders.items(3):
        total += item.price * item.quantity - 4
    return seen, total
"""


def _tree(root: Path, files: int = 60) -> None:
    (root / "pkg").mkdir(parents=True)
    for k in range(files):  # exact copies, renamed copies, both kinds (above PARALLEL_MIN)
        body = _FUNC.format(name=f"f{k % 3}", n=1) + "\n\n" + _FUNC.format(name=f"g{k}", n=k)
        (root / "pkg" / f"m{k}.py").write_text(f"import os\n\n\n{body}")


def _fresh(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    from ore.graph.judgment import shapecache

    shapecache._MEMO.clear()
    shapecache._UNSAVED.clear()
    monkeypatch.setenv("ORE_HOME", str(home))


@pytest.mark.parametrize("cores", [1, 2])
def test_shapes_made_beside_the_index_are_the_shapes_made_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cores: int
) -> None:
    from ore.graph import open_graph
    from ore.graph.judgment import clones, shapecache

    monkeypatch.setattr(pool, "_cores", lambda: cores)
    monkeypatch.setattr(clones, "PARALLEL_MIN", 1 << 30)  # the pairing in this process
    root = tmp_path / "repo"
    _tree(root)
    found: dict[bool, Any] = {}
    shapes: dict[bool, Any] = {}
    for along in (False, True):
        _fresh(
            monkeypatch, tmp_path / f"home-{along}"
        )  # a cold run: no index, no shapes, no kept answer
        g = open_graph(root, shapes=along)
        assert bool(shapecache._MEMO.get(g.root)) is along  # made by the index, or not yet
        found[along] = clones._clone_rows(g.duplicates())
        shapes[along] = {p: s.to_row() for p, (_d, s) in shapecache._MEMO[g.root].items()}
        assert shapecache._file(g.root).exists()  # kept for the next query all the same
        assert g.root not in shapecache._UNSAVED
    assert {row[0] for row in found[False]} >= {"exact", "renamed"}
    assert found[True] == found[False]
    assert len(shapes[True]) == 60
    assert shapes[True] == shapes[False]


def test_a_cold_duplicates_parses_each_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ore.graph import open_graph

    monkeypatch.setattr(pool, "_cores", lambda: 1)  # every parse in this process, counted
    trees: list[Any] = []
    parse = languages.parse

    def counted(*args: Any, **kwargs: Any) -> Any:
        tree = parse(*args, **kwargs)
        if all(tree is not t for t in trees):
            trees.append(tree)  # kept alive: a new tree is a new object
        return tree

    monkeypatch.setattr(languages, "parse", counted)
    monkeypatch.setattr(extract, "parse", counted)
    root = tmp_path / "repo"
    _tree(root)
    _fresh(monkeypatch, tmp_path / "home-once")
    assert open_graph(root, shapes=True).duplicates()
    assert len(trees) == 60
    _fresh(monkeypatch, tmp_path / "home-twice")
    trees.clear()
    assert open_graph(root).duplicates()
    assert len(trees) == 120  # without: the shapes parse every file again
