"""`ore.graph.serve.WarmGraph`, the body `ore mcp` answers from: kept in memory, patched when
files change, opened again when files come or go, and the cache it leaves equal to a fresh
index (with the inotify watch, and with the stat probe alone)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ore.graph import open_graph
from ore.graph import patch as patch_module
from ore.graph import serve as serve_module
from ore.graph.serve import WarmGraph

FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": "def base():\n    return 1\n",
    "pkg/user.py": "from pkg.core import base\n\n\ndef use():\n    return base()\n",
    "pkg/other.py": "def alone():\n    return 2\n",
}


@pytest.fixture(params=["inotify", "stat"])
def warm(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[WarmGraph]:
    monkeypatch.setenv("ORE_HOME", str(tmp_path / "home"))
    if request.param == "stat":
        monkeypatch.setattr(serve_module.Watch, "start", classmethod(lambda cls, folders: None))
    root = tmp_path / "proj"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    w = WarmGraph(root)
    w.graph()
    w.graph()  # the check after opening: nothing changed
    yield w
    w.close()


def dependents(w: WarmGraph, file: str) -> list[str]:
    return [n.path for n in w.graph().dependents(file)]


def same_as_fresh(w: WarmGraph) -> None:
    """The warm graph answers as a fresh process would, and the cache it wrote is current."""
    w.close()
    fresh = open_graph(w.root)
    g = w.graph()
    assert fresh.index.parsed == 0  # the cache holds every edit
    assert fresh.index.edge_columns == g.index.edge_columns
    assert fresh.index.externals == {k: v for k, v in g.index.externals.items() if v}
    assert [r.to_dict() for r in fresh.top_files(10)] == [r.to_dict() for r in g.top_files(10)]
    assert fresh.symbol("base") == g.symbol("base")


def test_nothing_changed_is_the_same_graph(warm: WarmGraph) -> None:
    first = warm.graph()
    assert warm.graph() is first and (warm.refreshes, warm.patches) == (1, 0)
    (warm.root / "pkg" / "notes.txt").write_text("not source")  # no language claims it
    assert warm.graph() is first and (warm.refreshes, warm.patches) == (1, 0)


@pytest.mark.invariant
def test_an_edit_is_patched_in_memory(warm: WarmGraph) -> None:
    core = warm.root / "pkg" / "core.py"
    core.write_text(core.read_text() + "\n# a comment\n")
    assert warm.graph().search("a comment")[0].path == "pkg/core.py"
    assert (warm.refreshes, warm.patches) == (1, 1)
    other = warm.root / "pkg" / "other.py"
    other.write_text("from pkg.core import base\n\n\ndef alone():\n    return base()\n")
    assert dependents(warm, "pkg/core.py") == ["pkg/other.py", "pkg/user.py"]
    assert (warm.refreshes, warm.patches) == (1, 2)
    user = warm.root / "pkg" / "user.py"  # a body that now uses os: the resolution is kept
    user.write_text("import os\nfrom pkg.core import base\n\n\ndef use():\n    return os.sep\n")
    assert dependents(warm, "pkg/core.py") == ["pkg/other.py", "pkg/user.py"]
    user.write_text("from pkg.core import base\n\n\ndef use():\n    return base() + base()\n")
    assert warm.graph().symbol("use")[0].path == "pkg/user.py"
    assert (warm.refreshes, warm.patches) == (1, 4)
    same_as_fresh(warm)


@pytest.mark.invariant
def test_an_atomic_save_is_an_edit_not_a_new_file(warm: WarmGraph) -> None:
    core = warm.root / "pkg" / "core.py"
    temp = warm.root / "pkg" / ".core.py.swp"
    temp.write_text("def base():\n    return 1\n\n\ndef added():\n    return 3\n")
    os.replace(temp, core)
    assert warm.graph().symbol("added")[0].path == "pkg/core.py"
    assert (warm.refreshes, warm.patches) == (1, 1)
    same_as_fresh(warm)


@pytest.mark.invariant
def test_a_same_size_edit_inside_the_mtime_tick_is_seen(warm: WarmGraph) -> None:
    core = warm.root / "pkg" / "core.py"
    before = core.stat()
    core.write_text("def bass():\n    return 1\n")  # same size
    os.utime(core, ns=(before.st_atime_ns, before.st_mtime_ns))  # same mtime
    assert warm.graph().symbol("bass")[0].exact
    same_as_fresh(warm)


@pytest.mark.invariant
def test_files_that_come_or_go_open_the_graph_again(warm: WarmGraph) -> None:
    (warm.root / "pkg" / "extra.py").write_text("from pkg.core import base\n")
    assert "pkg/extra.py" in dependents(warm, "pkg/core.py")
    (warm.root / "pkg" / "user.py").unlink()
    assert dependents(warm, "pkg/core.py") == ["pkg/extra.py"]
    (warm.root / "sub").mkdir()
    (warm.root / "sub" / "deep.py").write_text("from pkg.core import base\n")
    assert "sub/deep.py" in dependents(warm, "pkg/core.py")
    assert warm.refreshes == 4 and warm.patches == 0
    same_as_fresh(warm)


def test_an_edit_rebuilds_only_what_it_changed(
    warm: WarmGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the imports are resolved, an edit that keeps them (a new name, a new use) resolves
    nothing again nor builds every edge: the edges out of the files it can change are built
    again, and the rows of the reverse adjacency it did not touch are the same objects."""
    user = warm.root / "pkg" / "user.py"
    user.write_text("import os\nfrom pkg import core\n\n\ndef use():\n    return core.base()\n")
    g = warm.graph()  # an import changed: resolved again, this once
    assert dependents(warm, "pkg/core.py") == ["pkg/user.py"]
    incoming = g.incoming

    def refuse(*_args: object) -> None:
        raise AssertionError("built again for an edit that keeps the imports")

    monkeypatch.setattr(patch_module, "resolve_all", refuse)
    monkeypatch.setattr(patch_module, "build_edges", refuse)
    core = warm.root / "pkg" / "core.py"
    core.write_text("def base():\n    return 1\n\n\ndef later():\n    return 2\n")  # a new name
    assert warm.graph().symbol("later")[0].path == "pkg/core.py"
    assert warm.graph().incoming["pkg/user.py"] is incoming["pkg/user.py"]
    user.write_text("import os\nfrom pkg import core\n\n\ndef use():\n    return core.later()\n")
    assert dependents(warm, "pkg/core.py") == ["pkg/user.py"]
    assert warm.graph().incoming["pkg/other.py"] is incoming["pkg/other.py"]
    assert (warm.refreshes, warm.patches) == (1, 3)
    same_as_fresh(warm)


def test_a_snippet_after_an_edit_rebuilds_one_file_of_the_line_index(warm: WarmGraph) -> None:
    """The warm body compares a snippet only with the files sharing a line with it (the line
    index it keeps); an edit rebuilds that file's part alone, and the answer is a fresh one's."""
    from ore.graph.judgment import lineindex, snippet_match

    body = "def total(items):\n    count = len(items) + sum(items)\n    return count * 2\n"
    (warm.root / "pkg" / "other.py").write_text(body)
    snippet = body.replace("total", "summed").replace("count", "n")
    assert [m.path for m in warm.graph().duplicates_of(snippet)] == ["pkg/other.py"]
    index = lineindex.kept(warm.root, snippet_match._TRIVIAL_TOKENS)
    assert index is not None
    built = index.built
    (warm.root / "pkg" / "core.py").write_text("def base():\n    return 1\n\n\n" + body)
    found = [m.path for m in warm.graph().duplicates_of(snippet)]
    assert found == ["pkg/core.py", "pkg/other.py"]
    assert index.built == built + 1
    warm.close()
    assert [m.path for m in open_graph(warm.root).duplicates_of(snippet)] == found


def test_a_file_edited_again_shapes_only_the_functions_the_edit_touched(
    warm: WarmGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judgment's shape of an edited file is made again, but only the functions whose
    text changed are shaped again (the rest are kept by their text)."""
    from ore.graph.judgment import function_shapes

    n = sum(map(ord, str(warm.root)))  # texts no other test shaped in this process
    body = "def tally_{n}(items):\n    count = len(items) + sum(items)\n    return count * {n}\n"
    core = warm.root / "pkg" / "core.py"
    core.write_text(body.format(n=n) + "\n\n" + body.format(n=n + 1))
    snippet = body.format(n=n + 2).replace(f"tally_{n + 2}", "summed")
    assert [m.path for m in warm.graph().duplicates_of(snippet)] == ["pkg/core.py"] * 2
    shaped: list[bytes] = []  # the functions of files shaped again (the snippet's aside)
    real = function_shapes._shaped

    def counted(node: Any, lines: bool, profile: bool) -> tuple[Any, ...]:
        if not profile:
            shaped.append(node.text)
        return real(node, lines, profile)

    monkeypatch.setattr(function_shapes, "_shaped", counted)
    core.write_text(core.read_text() + "\n\n" + body.format(n=n + 3))
    found = warm.graph().duplicates_of(snippet)
    assert [m.start for m in found] == [1, 6, 11]
    assert shaped == [body.format(n=n + 3).rstrip("\n").encode()]  # the new function alone
    warm.close()
    assert open_graph(warm.root).duplicates_of(snippet) == found


BIG = '''"""A module edited again and again."""
from pkg.core import base


class Store:
    """Kept."""

    def read(self):
        return base()

    def write(self, value):
        return value


def helper(items):
    total = 0
    for item in items:
        total += item  # a comment
    return total


VALUE = helper([1, 2])
'''
#: Edits of pkg/big.py, one after another: (what is replaced, by what).
BIG_EDITS = (
    ("# a comment", "# another comment"),  # a comment: no edge moves
    ("        return value\n", "        return value + 1\n"),  # a body
    ("VALUE = helper([1, 2])\n", "VALUE = helper([1, 2])\n\n\ndef more():\n    return base()\n"),
    ('"""Kept."""', '"""Kept.\n\n    Longer.\n    """'),  # lines added above the rest
    ("from pkg.core import base\n", "from pkg.core import base\nfrom pkg.other import alone\n"),
    ("        return base()\n", "        return alone() + base()\n"),  # a use in a method
    ("class Store:", "class Store(object):"),
    ("from pkg.core import base\n", ""),  # an import gone: its uses no longer count
    ("def helper(items):", "def helper(items, start=0):"),
    ("    return total\n", "    return total\n\n\n# the end\n"),
    # a new function no file uses, calling only this file's names: no edge can move
    ("VALUE = helper([1, 2])\n", "VALUE = helper([1, 2])\n\n\ndef spare(value):\n    return 1\n"),
    # a new function pkg/reader.py uses through its star import: its edges move
    ("def spare(", "def lonely(value):\n    return helper(value)\n\n\ndef spare("),
    ("class Store(object):", "class Spare:\n    pass\n\n\nclass Store(object):"),  # a class
    # a function named as an imported name this file uses: its own edge to pkg/other.py goes
    ("def helper(items, start=0):", "def alone():\n    return 3\n\n\ndef helper(items, start=0):"),
    ("def lonely(value):\n    return helper(value)\n\n\n", ""),  # a used function removed
    ("class Spare:\n    pass\n\n\n", ""),  # the class removed
    ("def alone():\n    return 3\n\n\n", ""),  # the import's name is the import's again
    ("\n\ndef spare(value):\n    return 1\n", ""),  # the unused function removed
)
#: A file using pkg/big.py's names through a star import (the names that come and go there).
READER = "from pkg.big import *\n\n\ndef read_all():\n    return lonely(1) + Spare() + helper([])\n"


@pytest.mark.invariant
def test_every_edit_answers_as_a_full_index(
    warm: WarmGraph, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file edited again is read by revisiting only the top-level nodes the edit touched
    (`index.revisit`) and patched in memory: after each edit every record, every edge and
    `dependents` of every file are those of a fresh index of the tree."""
    from ore.graph.index import languages, revisit

    revisits: list[bool] = []
    real = revisit._kept_pieces
    monkeypatch.setattr(
        revisit, "_kept_pieces", lambda *a: revisits.append(real(*a) is not None) or real(*a)
    )
    big = warm.root / "pkg" / "big.py"
    big.write_text(BIG)
    (warm.root / "pkg" / "reader.py").write_text(READER)
    warm.graph()
    text = BIG
    for n, (old, new) in enumerate(BIG_EDITS):
        assert old in text, n
        text = text.replace(old, new, 1)
        big.write_text(text)
        g = warm.graph()
        kept = languages._LAST, revisit._KEPT
        monkeypatch.setenv("ORE_HOME", str(tmp_path / f"fresh{n}"))
        languages._LAST, revisit._KEPT = [], []  # a fresh process: nothing kept
        try:
            fresh = open_graph(warm.root)
        finally:
            languages._LAST, revisit._KEPT = kept
        records = g.index.files.all()
        for rel, record in fresh.index.files.all().items():
            assert records[rel].to_row()[5:] == record.to_row()[5:], (n, rel)
        assert g.index.edges == fresh.index.edges, n
        for rel in records:
            assert g.dependents(rel) == fresh.dependents(rel), (n, rel)
    assert warm.patches >= len(BIG_EDITS)
    assert revisits.count(True) >= len(BIG_EDITS) - 1  # the first edit reads every node


def test_an_edit_is_read_ahead_of_the_next_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With `ahead` (what `ore mcp` uses), the inotify event of an edit starts its reading on a
    thread of its own: a call coming later finds the graph patched, and answers the edit."""
    monkeypatch.setenv("ORE_HOME", str(tmp_path / "home"))
    root = tmp_path / "proj"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    w = WarmGraph(root, ahead=True)
    try:
        w.graph()
        w.graph()
        if w._watch is None:
            pytest.skip("no inotify here")
        other = root / "pkg" / "other.py"
        other.write_text("from pkg.core import base\n\n\ndef alone():\n    return base()\n")
        deadline = time.monotonic() + 10
        while w.patches == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert w.patches == 1  # no call was made
        assert dependents(w, "pkg/core.py") == ["pkg/other.py", "pkg/user.py"]
        assert (w.refreshes, w.patches) == (1, 1)
        (root / "pkg" / "extra.py").write_text("from pkg.core import base\n")  # a file came
        deadline = time.monotonic() + 10
        while w.refreshes == 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert "pkg/extra.py" in dependents(w, "pkg/core.py")
        other.write_text("def alone():\n    return 2\n")  # the new watch is waited on
        deadline = time.monotonic() + 10
        while w.patches == 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert w.patches == 2
        assert sorted(dependents(w, "pkg/core.py")) == ["pkg/extra.py", "pkg/user.py"]
    finally:
        w.close()
    same_as_fresh(w)


def fresh_like(w: WarmGraph, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    """Every edge, `dependents` and `top_files` (PageRank) of the warm graph are those of a
    fresh index of the tree (its own cache, nothing kept from this process)."""
    from ore.graph.index import languages, revisit

    g = w.graph()
    kept = languages._LAST, revisit._KEPT
    monkeypatch.setenv("ORE_HOME", str(tmp_path / f"fresh{n}"))
    languages._LAST, revisit._KEPT = [], []
    try:
        fresh = open_graph(w.root)
    finally:
        languages._LAST, revisit._KEPT = kept
    assert g.index.edges == fresh.index.edges, n
    assert g.index.edge_columns[:3] == fresh.index.edge_columns[:3], n
    assert list(g.index.edge_columns[3]) == list(fresh.index.edge_columns[3]), n
    for rel in g.files:
        assert g.dependents(rel) == fresh.dependents(rel), (n, rel)
    assert [r.to_dict() for r in g.top_files(None)] == [r.to_dict() for r in fresh.top_files(None)]


@pytest.mark.invariant
def test_names_that_come_reach_the_files_using_them_and_unchanged_edges_keep_pagerank(
    warm: WarmGraph, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files using each name are kept and brought up to date per edit (no pass over every
    file); a name that comes reaches every file using it, however that use came; an edit whose
    edges, built again, come out the same keeps PageRank (no recomputation), and a later query
    that needs PageRank after an edit that moved an edge sees that edge."""
    from ore.graph.queries import derived

    core, user, other = (warm.root / "pkg" / name for name in ("core.py", "user.py", "other.py"))
    (warm.root / "pkg" / "__init__.py").write_text("from pkg.core import *\n")
    user.write_text("import os\nfrom pkg import core\n\n\ndef use():\n    return core.base()\n")
    other.write_text("from pkg import *\n\n\ndef alone():\n    return base()\n")
    users = ["pkg/__init__.py", "pkg/other.py", "pkg/user.py"]
    assert sorted(dependents(warm, "pkg/core.py")) == users
    warm.graph().top_files(None)
    steps = [  # (file, text): each a fresh index's answers after it
        (core, "def base():\n    return 1\n\n\ndef later():\n    return 2\n"),  # a name comes
        (other, "from pkg import *\n\n\ndef alone():\n    return soon()\n"),  # not defined
        (core, "def base():\n    return 1\n\n\ndef soon():\n    return 2\n"),  # it comes
        (user, "import os\nfrom pkg import core\n\n\ndef use():\n    return core.soon()\n"),
        (core, "def base():\n    return 1\n"),  # it goes: both users move
        (core, "def base():\n    return 1\n\n\ndef soon():\n    return 2\n"),
    ]
    for n, (path, text) in enumerate(steps):
        path.write_text(text)
        fresh_like(warm, tmp_path, monkeypatch, n)
    rank = warm.graph().__dict__["pagerank"]

    def refuse(*_args: object) -> None:
        raise AssertionError("PageRank computed again for an edit that kept every edge")

    real = derived.pagerank
    monkeypatch.setattr(derived, "pagerank", refuse)
    core.write_text(core.read_text() + "\n\ndef helper():\n    return base()\n")  # a new name
    g = warm.graph()
    assert g.symbol("helper")[0].path == "pkg/core.py"
    assert g.__dict__.get("pagerank") is rank  # the same edges: kept
    assert [r.path for r in g.top_files(None)] == [r.path for r in warm.graph().top_files(None)]
    monkeypatch.setattr(derived, "pagerank", real)
    fresh_like(warm, tmp_path, monkeypatch, len(steps))


def test_a_new_function_using_nothing_new_builds_no_edge_and_the_head_waits(
    warm: WarmGraph, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new function that no file uses and that uses only its own file's names (what the bench
    times) builds no reference edge again, not even its own file's, and keeps PageRank; the
    head's file columns (the cache's, which `dependents` never reads) are made only when read,
    and then hold every edit since the last head made."""
    from ore.graph.index.cache import CachedIndex, head_of

    core = warm.root / "pkg" / "core.py"
    core.write_text(core.read_text() + "\n\ndef later():\n    return 2\n")  # links resolved once
    warm.graph().top_files(None)
    rank = warm.graph().__dict__["pagerank"]
    made: list[int] = []
    real = patch_module.patched_head
    monkeypatch.setattr(
        patch_module,
        "patched_head",
        lambda *a: made.append(1) or real(*a),  # type: ignore[func-returns-value]
    )

    def refuse(*_args: object) -> None:
        raise AssertionError("reference edges built again for a name nobody uses")

    monkeypatch.setattr(patch_module, "rebuilt_edges", refuse)
    text = core.read_text()
    for n in range(3):
        text += f"\n\ndef unused_{n}(value):\n    return base() + later()\n"
        core.write_text(text)
        assert dependents(warm, "pkg/core.py") == ["pkg/user.py"]
        assert warm.graph().symbol(f"unused_{n}")[0].path == "pkg/core.py"
    (warm.root / "pkg" / "other.py").write_text("def alone():\n    return 3\n")
    g = warm.graph()
    assert g.__dict__.get("pagerank") is rank and not made
    head = g.index.files.head  # read: made now, once, from every record changed since
    assert len(made) == 1
    whole = head_of(CachedIndex(g.index.files.all(), head.indexed_ns, g.index.edges, {}))
    assert head.files == whole.files and head.edges == g.index.edge_columns
    assert g.index.files.head is head
    fresh_like(warm, tmp_path, monkeypatch, 0)


def test_the_names_an_edit_moved_are_found_where_the_symbols_differ() -> None:
    """`patch.names_moved` reads only the stretch where two symbol lists differ (by identity):
    it finds every name that came or went, whatever the edit (a few more at most: a name
    defined again where the lists agree), so no file using one is left with stale edges."""
    import random

    from ore.graph.index.records import Symbol

    rng = random.Random(24)
    pool = [Symbol(f"n{i}", "function", i, i, "") for i in range(30)]
    for step in range(2000):
        before = tuple(rng.sample(pool, rng.randrange(20)))
        now = list(before)
        for _ in range(rng.randrange(4)):
            at = rng.randrange(len(now) + 1)
            if rng.randrange(2) or not now:
                now.insert(at, Symbol(rng.choice(pool).name, "class", 0, 0, ""))
            else:
                del now[min(at, len(now) - 1)]
        exact = {s.name for s in before} ^ {s.name for s in now}
        found = patch_module.names_moved(before, tuple(now))
        assert exact <= found <= {s.name for s in (*before, *now)}, step
    shared = tuple(pool)
    assert patch_module.names_moved(shared, (*shared, Symbol("new", "function", 99, 99, ""))) == {
        "new"
    }
