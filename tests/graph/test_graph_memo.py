"""Answers kept by content (`ore.graph.judgment.memo`, `ore.graph.queries.derived`): asked again
over the same files they are read back, never computed; any edit to a file they looked at, a
damaged file or other parameters compute them afresh, and the answer is always the one computing
gives."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_graph_duplicates import EXACT, ORIGINAL, RENAMED, UNRELATED

from ore.graph import CodeGraph, open_graph
from ore.graph.index.cache import cache_path
from ore.graph.judgment import clones, conventions, memo
from ore.graph.queries import rank


@pytest.fixture
def g(tmp_path: Path) -> CodeGraph:
    root = tmp_path / "proj"
    files = {
        "shop/orders.py": "import logging\n\n\n" + ORIGINAL,
        "shop/report.py": "X = 1\n\n" + EXACT + "\n\n" + UNRELATED,
        "billing/invoices.py": "from shop import orders\n\n\n" + RENAMED,
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return open_graph(root, jobs=1)


def refuse(*_args: object, **_kwargs: object) -> None:
    raise AssertionError("computed again: the kept answer should have been read")


def test_clone_groups_are_read_back_while_the_files_are_unchanged(
    g: CodeGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = g.duplicates()
    assert first and cache_path(g.root).with_suffix(".memo").exists()
    with monkeypatch.context() as m:
        m.setattr(clones, "load_shapes", refuse)
        assert open_graph(g.root, jobs=1).duplicates() == first
        with pytest.raises(AssertionError, match="computed again"):
            open_graph(g.root, jobs=1).duplicates(min_lines=6)  # other parameters
    (g.root / "shop/report.py").write_text(UNRELATED, encoding="utf-8")
    edited = open_graph(g.root, jobs=1).duplicates()
    assert not any(o.path == "shop/report.py" for c in edited for o in c.occurrences)
    assert edited == clones.find_clones(open_graph(g.root, jobs=1))


def test_a_damaged_or_foreign_memo_is_recomputed(g: CodeGraph) -> None:
    first = g.duplicates()
    kept = cache_path(g.root).with_suffix(".memo")
    for junk in (b"damaged", memo.MEMO_MAGIC + b"\0" * 32 + b"not marshal"):
        kept.write_bytes(junk)
        assert open_graph(g.root, jobs=1).duplicates() == first
    kept.unlink()
    kept.mkdir()  # not even a file: reads as empty, the write fails quietly
    assert open_graph(g.root, jobs=1).duplicates() == first


def test_at_most_max_entries_answers_are_kept(
    g: CodeGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memo, "MAX_ENTRIES", 3)
    for n in range(2, 7):
        g.duplicates(min_lines=n, min_tokens=1)
    assert len(memo._read(g.root)) == 3
    with monkeypatch.context() as m:
        m.setattr(clones, "load_shapes", refuse)
        g.duplicates(min_lines=6, min_tokens=1)  # the latest are kept
    g.duplicates(min_lines=2, min_tokens=1)  # the oldest was dropped: computed


def test_conventions_are_read_back_by_content(
    g: CodeGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = g.conventions()
    with monkeypatch.context() as m:
        m.setattr(conventions, "_tally", refuse)
        assert open_graph(g.root, jobs=1).conventions() == first
        assert open_graph(g.root, jobs=1).conventions("naming") == [first[3]]
    (g.root / "shop/extra.py").write_text("def getValue():\n    return 1\n", encoding="utf-8")
    naming = open_graph(g.root, jobs=1).conventions("naming")[0]
    assert naming != first[3]  # computed again: the new camelCase function counts
    assert any(p.name.startswith(("function names", "no rule")) for p in naming.patterns)


def test_pagerank_is_kept_by_edges_and_equals_computing_it(
    g: CodeGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    scores = g.pagerank
    assert scores == rank.pagerank(g.files, g.out)
    kept = cache_path(g.root).with_suffix(".derived")
    assert kept.exists()
    with monkeypatch.context() as m:
        m.setattr(rank, "pagerank", refuse)
        assert open_graph(g.root, jobs=1).pagerank == scores
    kept.write_bytes(b"damaged")
    assert open_graph(g.root, jobs=1).pagerank == scores
    (g.root / "shop/uses.py").write_text("from shop import report\n", encoding="utf-8")
    again = open_graph(g.root, jobs=1)
    assert again.pagerank == rank.pagerank(again.files, again.out)
    assert "shop/uses.py" in again.pagerank
