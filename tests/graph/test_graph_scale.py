"""Warm queries read what they need: the head of the cache, the name index, a few blocks of symbol
rows; never every record. And they answer exactly what the whole index would."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from ore.graph import CodeGraph, SymbolMatch, open_graph
from ore.graph.index.cache import BLOCK, cache_path

NAMES = ("Model", "model", "MODEL", "Models", "MyModel", "_Mode", "get_model", "Straße", "STRASSE")


def corpus(base: Path) -> Path:
    """More files than two blocks of symbol rows, with names that differ by case, by a letter,
    by a fold (ß / SS), defined twice in one file (the line decides) and in many files."""
    root = base / "proj"
    for n in range(2 * BLOCK + 9):
        folder = root / f"pkg{n % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        name = NAMES[n % len(NAMES)]
        body = [f"from pkg{(n + 1) % 7}.m{n + 1} import {NAMES[(n + 1) % len(NAMES)]}\n"]
        body.append(f"class {name}:\n    pass\n")
        body.append(f"def {name.lower()}_{n % 3}():\n    return {name}()\n")
        if n % 5 == 0:
            body.append(f"def {name}(x):\n    return x\n")  # the same name again, lower down
        (folder / f"m{n}.py").write_text("".join(body))
    stamp = os.stat(root / "pkg0" / "m0.py").st_mtime - 60
    for path in root.rglob("*.py"):
        os.utime(path, (stamp, stamp))
    return root


def reference_symbol(g: CodeGraph, name: str, limit: int | None) -> list[SymbolMatch]:
    """What `symbol` answered when it walked every record (before the name index)."""
    exact: list[SymbolMatch] = []
    close: list[tuple[int, SymbolMatch]] = []
    folded = name.casefold()
    names: set[str] = set()

    def match(path: str, s: object, is_exact: bool) -> SymbolMatch:
        n, kind, line, end, sig = s[:5]  # type: ignore[index]
        return SymbolMatch(n, kind, path, line, end, sig, is_exact)

    records = g.index.files.all()
    for path, record in records.items():
        for s in record.symbols:
            names.add(s.name)
            if s.name == name:
                exact.append(match(path, s, True))
            elif folded and folded in s.name.casefold():
                close.append((0 if s.name.casefold() == folded else 1, match(path, s, False)))
    fuzzy = set(difflib.get_close_matches(name, names, n=5, cutoff=0.8)) - {name}
    if fuzzy:
        for path, record in records.items():
            for s in record.symbols:
                if s.name in fuzzy and folded not in s.name.casefold():
                    close.append((2, match(path, s, False)))
    close.sort(key=lambda t: (t[0], len(t[1].name), t[1].name, t[1].path, t[1].line))
    return (exact + [m for _, m in close])[:limit]


QUERIES = (*NAMES, "strasse", "modle", "Mode", "x", "", "get_mode", "Nothing\nHere", "Straß")


def test_warm_queries_build_no_record(tmp_path: Path) -> None:
    root = corpus(tmp_path)
    assert open_graph(root).index.files.loaded  # a fresh index has its records at hand
    g = open_graph(root)
    assert g.index.parsed == 0
    g.dependents("pkg0/m0.py")
    g.top_files(5)
    assert g.symbol("Model", 3)
    assert not g.index.files.loaded  # the head, the name index and a block: nothing more
    assert len(g.index.files) == 2 * BLOCK + 9 and "pkg0/m0.py" in g.index.files


@pytest.mark.parametrize("limit", [1, 2, 5, 20, None])
def test_symbol_from_the_name_index_answers_as_every_record_would(
    tmp_path: Path, limit: int | None
) -> None:
    root = corpus(tmp_path)
    fresh = open_graph(root)
    warm = open_graph(root)
    whole = open_graph(root)
    for name in QUERIES:
        expected = reference_symbol(whole, name, limit)
        assert fresh.symbol(name, limit) == expected, name
        assert warm.symbol(name, limit) == expected, name
    assert not warm.index.files.loaded


def test_top_files_and_dependents_match_the_full_adjacency(tmp_path: Path) -> None:
    root = corpus(tmp_path)
    open_graph(root)
    g = open_graph(root)
    one_hop = {p: g.dependents(p) for p in g.files[:40]}
    top = g.top_files(None)
    assert not g.index.files.loaded and "incoming" not in g.__dict__
    assert [(f.dependents, f.dependencies) for f in top] == [
        (len(g.incoming[f.path]), len(g.out[f.path])) for f in top
    ]
    assert [f.language for f in top] == [g.index.files[f.path].language for f in top]
    assert [f.symbols for f in top] == [len(g.index.files[f.path].symbols) for f in top]
    assert one_hop == {p: g.dependents(p) for p in one_hop}  # now through `incoming`


def test_a_cache_replaced_after_its_head_was_read_is_not_mixed_in(tmp_path: Path) -> None:
    root = corpus(tmp_path)
    open_graph(root)
    old = open_graph(root)  # read the head of this cache only
    (root / "pkg1" / "m1.py").write_text("def Renamed():\n    pass\n")
    newer = open_graph(root)  # writes another cache under the same name
    assert newer.index.parsed == 1
    # the old graph's sections are gone: it parses the files again rather than read the new ones
    assert [s.path for s in old.symbol("Renamed")] == ["pkg1/m1.py"]
    assert old.index.files.loaded
    assert cache_path(root.resolve()).exists()  # the newer cache is kept
    assert open_graph(root).index.parsed == 0
