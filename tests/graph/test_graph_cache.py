"""The cache: staleness (edit, delete, add), corruption, atomic writes, hostile trees."""

from __future__ import annotations

import hashlib
import marshal
import math
import os
import stat
import subprocess
import threading
from array import array
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ore.errors import GraphError
from ore.graph import load_index, open_graph
from ore.graph.index.cache import (
    IMPORTS,
    MAGIC,
    NAMES,
    REFS,
    SYMBOLS,
    CachedIndex,
    cache_path,
    read_cache,
    write_cache,
)
from ore.graph.index.extract import MAX_BYTES
from ore.graph.index.records import Edge, Import


def tree(base: Path, files: dict[str, str | bytes]) -> Path:
    root = base / "proj"
    root.mkdir(exist_ok=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
    return root


def age(root: Path, seconds: int = 60) -> None:
    """Push every mtime into the past, so the fast path (not the racy rule) is what is tested."""
    for path in root.rglob("*"):
        if path.is_file():
            stamp = path.stat().st_mtime - seconds
            os.utime(path, (stamp, stamp))


BASE = {"a.py": "from b import helper\n", "b.py": "def helper():\n    pass\n", "c.py": "import a\n"}


def test_edit_delete_add_between_two_queries(tmp_path: Path) -> None:
    root = tree(tmp_path, BASE)
    first = open_graph(root, jobs=1)
    assert first.index.parsed == 3
    assert [d.path for d in first.dependents("b.py")] == ["a.py"]
    (root / "a.py").write_text("def other():\n    pass\n")  # edit: no longer imports b
    (root / "c.py").unlink()  # delete
    (root / "d.py").write_text("from b import helper\n")  # add
    second = open_graph(root, jobs=1)
    assert second.files == ["a.py", "b.py", "d.py"]
    assert [d.path for d in second.dependents("b.py")] == ["d.py"]
    assert [s.path for s in second.symbol("other")] == ["a.py"]
    assert second.index.parsed == 2  # a.py and d.py; b.py came from the cache


def test_unchanged_tree_parses_nothing_and_reuses_edges(tmp_path: Path) -> None:
    root = tree(tmp_path, BASE)
    age(root)
    open_graph(root, jobs=1)
    again = open_graph(root, jobs=1)
    assert again.index.parsed == 0
    assert len(again.index.edges) > 0


def test_touch_without_change_is_not_reparsed(tmp_path: Path) -> None:
    root = tree(tmp_path, BASE)
    age(root)
    open_graph(root, jobs=1)
    (root / "b.py").touch()
    assert open_graph(root, jobs=1).index.parsed == 0  # the hash is the truth


def test_same_size_edit_within_one_mtime_tick_is_seen(tmp_path: Path) -> None:
    root = tree(tmp_path, {"a.py": "def aaa():\n    pass\n"})
    open_graph(root, jobs=1)
    before = (root / "a.py").stat()
    (root / "a.py").write_text("def bbb():\n    pass\n")
    os.utime(root / "a.py", ns=(before.st_atime_ns, before.st_mtime_ns))
    assert [s.name for s in open_graph(root, jobs=1).symbol("bbb")] == ["bbb"]


def test_corrupt_cache_is_rebuilt(tmp_path: Path) -> None:
    root = tree(tmp_path, BASE)
    open_graph(root, jobs=1)
    path = cache_path(root.resolve())
    blob = path.read_bytes()
    flipped = blob[:-1] + bytes([blob[-1] ^ 0xFF])  # the last byte can be 0 already
    for damaged in (b"", b"garbage", blob[: len(blob) // 2], flipped):
        path.write_bytes(damaged)
        g = open_graph(root, jobs=1)
        assert g.index.parsed == 3
        assert len(g.files) == 3


def _bad_line(cached: CachedIndex) -> CachedIndex:
    record = cached.files["b.py"]
    symbol = record.symbols[0]._replace(line="1")
    return replace(cached, files={**cached.files, "b.py": replace(record, symbols=(symbol,))})


def _bad_record(cached: CachedIndex, **changes: object) -> CachedIndex:
    return replace(cached, files={**cached.files, "a.py": replace(cached.files["a.py"], **changes)})


#: Heads a writer could leave that pass the checksum but do not hold what ORE writes.
INCONSISTENT: dict[str, Callable[[CachedIndex], CachedIndex]] = {
    "an edge to a missing file": lambda c: replace(
        c, edges=(*c.edges, Edge("c.py", "zz-gone.py", "import", 1.0))
    ),
    "an edge from a missing file": lambda c: replace(
        c, edges=(Edge("0-gone.py", "b.py", "import", 1.0), *c.edges)
    ),
    "a weight that is infinite": lambda c: replace(
        c, edges=tuple(e._replace(weight=math.inf) for e in c.edges)
    ),
    "a weight that is NaN": lambda c: replace(
        c, edges=tuple(e._replace(weight=math.nan) for e in c.edges)
    ),
    "an edge of no known kind": lambda c: replace(
        c, edges=tuple(e._replace(kind="calls") for e in c.edges)
    ),
    "edges out of order": lambda c: replace(c, edges=tuple(reversed(c.edges))),
    "a size that is a string": lambda c: _bad_record(c, size="21"),
    "externals of a missing file": lambda c: replace(c, externals={"zz-gone.py": ("os",)}),
    "externals that are a string": lambda c: replace(c, externals={"a.py": "os"}),
}

#: Sections (read only when a query needs them) that pass their checksums but are inconsistent.
INCONSISTENT_SECTIONS: dict[str, Callable[[CachedIndex], CachedIndex]] = {
    "a line number that is a string": _bad_line,
    "a reference count that is a string": lambda c: _bad_record(c, refs=(("helper", "2"),)),
    "import names that are not a tuple": lambda c: _bad_record(
        c,
        imports=(Import("b", "helper", 0, 1, "from"),),  # type: ignore[arg-type]
    ),
}

FILES = {
    "a.py": "from b import helper\nhelper()\n",
    **{k: v for k, v in BASE.items() if k != "a.py"},
}


def _forged(tmp_path: Path, change: Callable[[CachedIndex], CachedIndex]) -> tuple[Path, Any]:
    root = tree(tmp_path, FILES)
    age(root)
    open_graph(root, jobs=1)
    cached = read_cache(root.resolve())
    assert cached is not None and len(cached.edges) >= 2
    write_cache(root.resolve(), change(cached))  # the checksum is the writer's own: it passes
    return root, cached


@pytest.mark.parametrize("change", list(INCONSISTENT.values()), ids=list(INCONSISTENT))
def test_a_cache_that_passes_its_checksum_but_is_inconsistent_is_rebuilt(
    tmp_path: Path, change: Callable[[CachedIndex], CachedIndex]
) -> None:
    root, _good = _forged(tmp_path, change)
    g = open_graph(root, jobs=1)
    assert g.index.parsed == 3  # rebuilt, not trusted
    assert [d.path for d in g.dependents("b.py")] == ["a.py"]
    assert [s.line for s in g.symbol("helper")] == [1]
    assert open_graph(root, jobs=1).index.parsed == 0  # and the rebuilt cache is trusted


@pytest.mark.parametrize(
    "change", list(INCONSISTENT_SECTIONS.values()), ids=list(INCONSISTENT_SECTIONS)
)
def test_a_section_that_passes_its_checksum_but_is_inconsistent_is_never_used(
    tmp_path: Path, change: Callable[[CachedIndex], CachedIndex]
) -> None:
    root, good = _forged(tmp_path, change)
    g = open_graph(root, jobs=1)  # the head is sound: nothing is parsed yet
    assert [s.line for s in g.symbol("helper")] == [1]
    assert {p: (r.symbols, r.imports, r.refs) for p, r in g.index.files.items()} == {
        p: (r.symbols, r.imports, r.refs) for p, r in good.files.items()
    }  # parsed again, not read from the section
    assert not cache_path(root.resolve()).exists()  # removed: the next run rebuilds it
    assert open_graph(root, jobs=1).index.parsed == 3
    assert open_graph(root, jobs=1).index.parsed == 0


def _forge(
    path: Path,
    head: Callable[[list[Any]], None],
    section: int = -1,
    change: Callable[[Any], Any] = lambda v: v,
) -> None:
    """Rewrite the cache file (this version's layout) with valid checksums: `head` changes the
    head's fields in place, `change` the value of section number `section`."""
    blob = path.read_bytes()
    lead = len(MAGIC) + 32 + 8
    size = int.from_bytes(blob[lead - 8 : lead], "little")
    fields = list(marshal.loads(blob[lead : lead + size]))
    sections, at = [], lead + size
    for length, _check in fields[5]:
        sections.append(blob[at : at + length])
        at += length
    if section >= 0:
        sections[section] = marshal.dumps(change(marshal.loads(sections[section])))
    fields[5] = tuple((len(s), hashlib.blake2b(s, digest_size=32).digest()) for s in sections)
    head(fields)
    data = marshal.dumps(tuple(fields))
    seal = hashlib.blake2b(data, digest_size=32).digest()
    path.write_bytes(MAGIC + seal + len(data).to_bytes(8, "little") + data + b"".join(sections))


def _shorten(columns: Any, column: int) -> Any:
    columns = list(columns)
    columns[column] = columns[column][:-1]
    return tuple(columns)


def _set(index: int, value: Callable[[Any], Any]) -> Callable[[list[Any]], None]:
    return lambda p: p.__setitem__(index, value(p[index]))


SHAPES: dict[str, Callable[[list[Any]], None]] = {
    "a column of edges shorter than the rest": _set(3, lambda e: _shorten(e, 1)),
    "a table missing a column": _set(2, lambda f: f[:-1]),
    "a table that is a list": _set(2, list),
    "a payload missing a table": lambda p: p.pop(4),
    "externals that are a list": _set(4, lambda x: list(x.items())),
    "weights that are not doubles": _set(3, lambda e: (*e[:3], b"\x00" * 3)),
    "sections that do not fill the file": _set(5, lambda t: (*t[:-1], (t[-1][0] + 1, t[-1][1]))),
}

#: (section, change): SYMBOLS is the first block of symbol rows.
SECTION_SHAPES: dict[str, tuple[int, Callable[[Any], Any]]] = {
    "a column of symbols shorter than the rest": (SYMBOLS, lambda v: _shorten(v, 2)),
    "imports that do not add up": (IMPORTS, lambda v: tuple(c[:-1] for c in v)),
    "references that are a list": (REFS, list),
    "a name index of the wrong shape": (NAMES, lambda v: v[:2]),
    "a name index row that no symbol has": (NAMES, lambda v: (*v[:3], _far_rows(v[3]))),
}


def _far_rows(rows: bytes) -> bytes:
    width = array("I").itemsize
    return array("I", [10**6] * (len(rows) // width)).tobytes()


@pytest.mark.parametrize("change", list(SHAPES.values()), ids=list(SHAPES))
def test_a_cache_with_rows_of_the_wrong_shape_is_rebuilt(
    tmp_path: Path, change: Callable[[list[Any]], None]
) -> None:
    root = tree(tmp_path, BASE)
    age(root)
    open_graph(root, jobs=1)
    _forge(cache_path(root.resolve()), change)
    assert read_cache(root.resolve()) is None
    g = open_graph(root, jobs=1)
    assert g.index.parsed == 3 and len(g.files) == 3


@pytest.mark.parametrize("change", list(SECTION_SHAPES.values()), ids=list(SECTION_SHAPES))
def test_a_section_of_the_wrong_shape_is_never_used(
    tmp_path: Path, change: tuple[int, Callable[[Any], Any]]
) -> None:
    root = tree(tmp_path, BASE)
    age(root)
    good = open_graph(root, jobs=1).index.files.all()
    _forge(cache_path(root.resolve()), lambda p: None, *change)
    g = open_graph(root, jobs=1)
    assert g.index.parsed == 0  # the head is sound
    assert [(s.path, s.line) for s in g.symbol("helper")] == [("b.py", 1)]
    assert dict(g.index.files) == good
    assert open_graph(root, jobs=1).index.parsed == 3  # the cache was removed, and is rebuilt


def test_cache_write_is_atomic_and_leaves_no_temp_files(tmp_path: Path) -> None:
    root = tree(tmp_path, BASE)
    open_graph(root, jobs=1)
    folder = cache_path(root.resolve()).parent
    assert [p.name for p in folder.iterdir()] == [cache_path(root.resolve()).name]


def test_a_fifo_at_the_cache_path_reads_as_no_cache_and_never_hangs(tmp_path: Path) -> None:
    root = tree(tmp_path, BASE)
    target = cache_path(root.resolve())
    target.parent.mkdir(parents=True)
    os.mkfifo(target)
    box: list[object] = []
    worker = threading.Thread(target=lambda: box.append(read_cache(root.resolve())), daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive() and box == [None]
    g = open_graph(root, jobs=1)  # rebuilds; writing the cache into a FIFO nobody reads fails
    assert len(g.files) == 3 and stat.S_ISFIFO(os.lstat(target).st_mode)


def test_parallel_parse_matches_serial(tmp_path: Path) -> None:
    files = {f"m{n}.py": f"import m{(n + 1) % 60}\ndef f{n}():\n    pass\n" for n in range(60)}
    root = tree(tmp_path, files)
    serial = load_index(root, jobs=1)
    cache_path(root.resolve()).unlink()
    seen: list[tuple[int, int]] = []
    parallel = load_index(root, jobs=2, progress=lambda done, total: seen.append((done, total)))
    assert parallel.files == serial.files
    assert parallel.edges == serial.edges
    assert seen[-1] == (60, 60)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the forked workers need fork")
def test_a_worker_that_dies_costs_time_not_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ore.graph.index.pool as pool_module

    files = {f"m{n}.py": f"import m{(n + 1) % 80}\ndef f{n}():\n    pass\n" for n in range(80)}
    root = tree(tmp_path, files)
    serial = load_index(root, jobs=1)
    cache_path(root.resolve()).unlink()
    parent = os.getpid()
    real = pool_module.index_file

    def dies_in_a_child(*args: object, **kwargs: object) -> object:
        if os.getpid() != parent:
            os._exit(3)  # a crash in a grammar, an OOM kill, ...
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pool_module, "index_file", dies_in_a_child)
    parallel = load_index(root, jobs=2)
    assert parallel.files == serial.files
    assert parallel.edges == serial.edges


def test_without_fork_a_process_pool_gives_the_same_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ore.graph.index.pool as pool_module

    files = {f"m{n}.py": f"import m{(n + 1) % 60}\ndef f{n}():\n    pass\n" for n in range(60)}
    root = tree(tmp_path, files)
    serial = load_index(root, jobs=1)
    cache_path(root.resolve()).unlink()
    monkeypatch.setattr(pool_module, "_FORK", False)
    seen: list[tuple[int, int]] = []
    pooled = load_index(root, jobs=2, progress=lambda done, total: seen.append((done, total)))
    assert pooled.files == serial.files
    assert pooled.edges == serial.edges
    assert seen[-1] == (60, 60)


# -- hostile trees ---------------------------------------------------------------------------


def test_missing_root_is_a_graph_error(tmp_path: Path) -> None:
    with pytest.raises(GraphError, match="does not exist"):
        open_graph(tmp_path / "nope")
    (tmp_path / "file.py").write_text("")
    with pytest.raises(GraphError, match="not a folder"):
        open_graph(tmp_path / "file.py")


def test_empty_root_gives_an_empty_graph(tmp_path: Path) -> None:
    root = tree(tmp_path, {})
    g = open_graph(root)
    assert g.files == []
    assert g.top_files() == []
    assert g.stats().files == 0


def test_hostile_files_are_skipped_and_counted(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "ok.py": "def fine():\n    pass\n",
            "binary.py": b"\x00\x01\x02def x(): pass",
            "latin.py": "def caf\xe9():\n    pass\n".encode("latin-1"),
            "broken.py": "def (:\n",
            "big.js": "x" * (MAX_BYTES + 1),
            "locked.py": "def hidden():\n    pass\n",
            "app.min.js": "var a=1;",
            "node_modules/dep/index.js": "module.exports = 1;",
            ".hidden/secret.py": "",
            "venv/pyvenv.cfg": "home = /usr\n",
            "venv/lib/site.py": "",
            "nested/.git/HEAD": "ref: refs/heads/main\n",
            "nested/inner.py": "",
        },
    )
    (root / "locked.py").chmod(0)
    (root / "loop").symlink_to(root, target_is_directory=True)
    (root / "dangling.py").symlink_to(root / "missing.py")
    try:
        g = open_graph(root, jobs=1)
        stats = g.stats()
    finally:
        (root / "locked.py").chmod(0o644)
    expected = {"ok.py", "latin.py", "broken.py"}
    if os.geteuid() == 0:  # root reads mode-000 files anyway
        expected.add("locked.py")
    assert set(g.files) == expected
    assert stats.skipped["binary"] == 1
    assert stats.skipped["too_large"] == 1
    # the dangling symlink, plus the mode-000 file for anyone but root
    assert stats.skipped["unreadable"] == (1 if os.geteuid() == 0 else 2)
    assert stats.parse_errors >= 1  # broken.py (the latin-1 file may count too)
    assert stats.non_utf8 == 1


@pytest.mark.invariant
@pytest.mark.parametrize("git", [False, True], ids=["walk", "git"])
def test_a_file_symlink_is_indexed_only_when_it_resolves_inside_the_root(
    tmp_path: Path, git: bool
) -> None:
    root = tree(tmp_path, {"ok.py": "def fine():\n    pass\n"})
    (tmp_path / "outside.py").write_text("SECRET = 'TOP SECRET'\n", encoding="utf-8")
    (root / "leak.py").symlink_to(tmp_path / "outside.py")
    (root / "alias.py").symlink_to(root / "ok.py")
    if git:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    g = open_graph(root, jobs=1)
    assert set(g.files) == {"ok.py", "alias.py"}
    assert g.stats().skipped["outside_root"] == 1
    assert g.search("SECRET") == []


def test_git_work_tree_honours_gitignore(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            ".gitignore": "generated/\n",
            "keep.py": "",
            "generated/out.py": "",
            "untracked.py": "",
        },
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "keep.py", ".gitignore"], check=True)
    assert open_graph(root, jobs=1).files == ["keep.py", "untracked.py"]


def test_an_answer_begun_from_the_cache_is_begun_again_from_the_files(tmp_path: Path) -> None:
    """A block of symbol rows found unusable mid-answer: the rows already looked up came from
    the cache, so the answer starts again from the files as they are now, never mixing both."""
    root = tree(tmp_path, BASE)
    age(root)
    open_graph(root, jobs=1)
    _forge(cache_path(root.resolve()), lambda p: None, SYMBOLS, lambda v: _shorten(v, 2))
    g = open_graph(root, jobs=1)  # the head is sound, the block is not (yet unread)
    (root / "b.py").write_text("x = 1\n")  # helper is gone; its row number now names `x`
    assert g.symbol("helper") == []
    assert [s.name for s in g.symbol("x")] == ["x"]
