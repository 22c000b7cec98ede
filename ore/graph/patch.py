"""What one edit changes in a warm graph (`WarmGraph`, `ore.graph.serve`): the graph patched in
memory when files changed and none came or went (`patch`).

Those files alone are parsed again (incrementally from their last tree when this process parsed
them before: `index.languages.parse`, and their records by revisiting only the top-level nodes
the edit touched: `index.revisit`). When what edges are built from (imports, references,
defined names) is unchanged, the edges, adjacency, degrees and PageRank carry over; when only
references or names changed, only the reference edges of the files that can change are built
again (`edges.referring`: the edited files and the users of a name that came or went, found from
the files using each name, kept in `Links`) and, when they differ from those they replace,
spliced into the edges, the head's columns and the adjacency (`_patch_adjacency`: every
untouched row shared), PageRank waiting for a question that needs it (edges that came out the
same keep everything, PageRank too); only an import changed resolves every import again (the
last resolution is kept otherwise). The cache is written behind the answer by the caller's
`CacheWriter`.

Apart from `serve` because the two change for different reasons: `serve` is the body's life
(when to look, the watch, the thread reading ahead, the writes behind), this module is what an
edit means for the records and edges, and the invariant tests hold it to a fresh index.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from itertools import compress, count
from operator import attrgetter, is_not
from typing import Any, Protocol

from .graph import CodeGraph
from .index.cache import (
    NAMES,
    CachedIndex,
    Head,
    head_of,
    name_index,
    patched_head,
    spliced_edges,
    write_cache,
)
from .index.edges import (
    Defined,
    Run,
    aliases_of,
    build_edges,
    rebuilt_edges,
    referred,
    used_names,
)
from .index.extract import MAX_BYTES, Skipped
from .index.load import Index
from .index.pool import Work, parse_all
from .index.records import Edge, FileIndex, Symbol
from .index.resolve import Resolution, resolve_all
from .index.stored import Records, paused_gc

__all__ = ["CacheWriter", "Links", "PatchedRecords", "names_moved", "patch"]


class CacheWriter(Protocol):
    """Where the patched index is written behind the answer (`serve._Writer`)."""

    def write(self, what: str, job: Callable[[], object]) -> None: ...


#: What a graph derives from its files and edges alone: kept across a patch that left both.
_BY_EDGES = (
    "out",
    "imports",
    "eager_imports",
    "kinds",
    "incoming",
    "_degrees",
    "pagerank",
    "_derived_key",
    "_by_rank",
)


def _imports(record: FileIndex) -> tuple[object, ...]:
    """What the resolution of imports reads in one record (not its line numbers): the imports
    as bound (and a Rust file's references: its paths resolve through them)."""
    imports = tuple((i.module, i.names, i.level, i.kind, i.binds, i.runs) for i in record.imports)
    return record.language, imports, record.refs if record.language == "rust" else ()


def _same_imports(new: FileIndex, old: FileIndex) -> bool:
    """Whether two records of a file resolve their imports alike (`_imports`), the imports
    first compared whole (line numbers too: an edit below them keeps the very same ones)."""
    if new.imports == old.imports and new.language == old.language:
        return new.language != "rust" or new.refs == old.refs
    return _imports(new) == _imports(old)


def _same_links(new: FileIndex, old: FileIndex, same_imports: bool) -> bool:
    """Whether two records of a file build the same edges: the same imports, references and
    defined names (by name and kind, in any order; most edits keep their order, so the lists
    are compared before they are sorted; a record read by revisiting its nodes shares the
    symbols of every node the edit did not move, so the symbols are first compared whole)."""
    if not same_imports or new.refs != old.refs or len(new.symbols) != len(old.symbols):
        return False
    if new.symbols == old.symbols:
        return True
    names = list(map(_NAME_KIND, new.symbols))
    before = list(map(_NAME_KIND, old.symbols))
    return names == before or sorted(names) == sorted(before)


_NAME_KIND = attrgetter("name", "kind")
_NAME = attrgetter("name")


class Links:
    """The imports as resolved at a patch, kept while no import changes, with what finding the
    files an edit can change reads (`edges.referring`): the names bound to each name, each
    file's used names and the files using each name, made once and then brought up to date
    for the files an edit changed; and the names each file defines (`edges.Defined`), which
    building a few files' reference edges looks up."""

    def __init__(self, resolution: Resolution) -> None:
        self.resolution = resolution
        self._aliases: dict[str, set[str]] | None = None
        self._used: dict[str, frozenset[str]] | None = None
        self._users: dict[str, set[str]] = {}
        self._defined: Defined | None = None

    def defined(self, files: dict[str, FileIndex], changed: frozenset[str]) -> Defined:
        """The names each file of `files` defines, those of `changed` read again."""
        if self._defined is None:
            self._defined = Defined(files)
        self._defined.renew(files, changed)
        return self._defined

    def referring(
        self, files: dict[str, FileIndex], names: set[str], changed: frozenset[str]
    ) -> set[str]:
        """The files whose reference edges can change when `names` come or go (`changed`: the
        files parsed again since the last call): `edges.referring`, from the files using each
        name rather than a pass over every file."""
        if self._aliases is None:
            self._aliases = aliases_of(self.resolution)
        if self._used is None:
            self._used = {path: used_names(record) for path, record in files.items()}
            for path, used in self._used.items():
                for name in used:
                    self._users.setdefault(name, set()).add(path)
        else:
            for path in changed:
                before, now = self._used[path], used_names(files[path])
                if now != before:
                    for name in before - now:
                        self._users[name].discard(path)
                    for name in now - before:
                        self._users.setdefault(name, set()).add(path)
                    self._used[path] = now
        if not names:
            return set()
        found: set[str] = set()
        for name in referred(names, self._aliases):
            found.update(self._users.get(name, ()))
        return found


def patch(
    old: CodeGraph, changed: frozenset[str], writer: CacheWriter, links: Links | None
) -> tuple[CodeGraph, Links | None] | None:
    """`old` with the records of `changed` (indexed files; none came or went) parsed again, and
    the resolution of imports its edges were built from when they were built again (`links`
    holds the last one, reused while no import changed). None when a file is gone or now
    skipped: the caller opens the graph through discovery."""
    root = str(old.root)
    records = old.index.files.all()
    stats: dict[str, os.stat_result] = {}
    work: list[Work] = []
    for rel in sorted(changed):
        try:
            info = os.stat(os.path.join(root, rel))
        except OSError:
            return None
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES or rel not in records:
            return None
        stats[rel] = info
        work.append((rel, records[rel].language, records[rel].digest))
    started = time.time_ns()
    files = dict(records)
    parsed, same_links, same_imports = 0, True, True
    with paused_gc():
        for (rel, _language, _known), result in zip(
            work, parse_all(root, work, 1, None), strict=True
        ):
            if isinstance(result, Skipped):
                return None
            if isinstance(result, FileIndex):
                files[rel] = result
                parsed += 1
                imports_kept = _same_imports(result, records[rel])
                same_links = same_links and _same_links(result, records[rel], imports_kept)
                same_imports = same_imports and imports_kept
            else:  # the same content under a new stat: keep the record, refresh its key
                info = stats[rel]
                files[rel] = replace(records[rel], size=info.st_size, mtime_ns=info.st_mtime_ns)
        runs: dict[str, Run] | None = None  # the files whose reference edges were built again
        again = {rel: files[rel] for rel in changed}
        columns, key = old.index.edge_columns, _edges_key(old.index.files)
        edges, externals = old.index.edges, old.index.externals
        made: Head | None = None  # the head, when every edge was built again
        if not same_links and same_imports and links is not None:  # the same bindings
            edges, runs = _references_again(old, records, files, changed, links)
            if runs:
                columns, key = spliced_edges(columns, sorted(runs.values())), ""
            else:  # every edge built again came out the same (or none could move): as if
                same_links, runs = True, None  # nothing edges are built from had moved
        elif not same_links:
            if links is None or not same_imports:
                links = Links(resolve_all(root, files))
            edges = build_edges(files, links.resolution)
            externals = {k: v for k, v in links.resolution.externals.items() if v}  # as cached
            made = head_of(CachedIndex(files, started, edges, externals))
            columns, key = made.edges, made.edges_key
        cached = CachedIndex(files, started, edges, externals)
    writer.write("index", partial(write_cache, old.root, cached))
    built = PatchedRecords(old.index.files, again, started, columns, externals, key, files, made)
    where = old.index.files.__dict__.get("_where")
    if where is not None:
        built.__dict__["_where"] = where  # the same paths (none came or went): each one's row
    index = Index(old.root, built, columns, externals, old.index.skipped, parsed)
    index.__dict__["edges"] = edges
    graph = CodeGraph(index)
    graph.kept = True
    if same_links:
        for name in _BY_EDGES:
            if name in old.__dict__:
                graph.__dict__[name] = old.__dict__[name]
    elif runs is not None:
        _patch_adjacency(old, graph, runs)
    return graph, links


def _references_again(
    old: CodeGraph,
    records: dict[str, FileIndex],
    files: dict[str, FileIndex],
    changed: frozenset[str],
    links: Links,
) -> tuple[tuple[Edge, ...], dict[str, Run]]:
    """`old`'s edges with the reference edges of the files an edit can change built again (the
    imports and their bindings unchanged), and each run that differs from the one it replaces
    (`edges.rebuilt_edges`; none: `old`'s edges). A file's reference
    edges are read from its used names, its bindings and the names files define, so they can
    move only for a file whose used names moved, or one using (itself or through an alias) a
    name that came or went anywhere (`edges.referring`): a new function that uses nothing new
    builds no edge again, not even its own file's."""
    names: set[str] = set()  # every name that came or went, in any changed file
    moved: set[str] = set()  # the changed files whose used names moved
    for rel in changed:
        before, now = records[rel], files[rel]
        if now.symbols is not before.symbols:
            names |= names_moved(before.symbols, now.symbols)
        if now.refs != before.refs:
            moved.add(rel)
    sources = moved | links.referring(files, names, frozenset(moved))
    defined = links.defined(files, changed)
    if not sources:
        return tuple(old.index.edges), {}
    columns = old.index.edge_columns[0]
    return rebuilt_edges(old.index.edges, columns, files, links.resolution, sources, defined)


def names_moved(before: tuple[Symbol, ...], now: tuple[Symbol, ...]) -> set[str]:
    """The names defined in one of two symbol lists of a file and not in the other, or a few
    more (a name also defined where the lists agree): only the stretch where they differ is
    read. A record read by revisiting its nodes shares every symbol the edit did not touch,
    so the common start and end are found by identity, in C, without reading a symbol."""
    most = min(len(before), len(now))
    head = next(compress(count(), map(is_not, before, now)), most)
    tail = next(compress(count(), map(is_not, reversed(before), reversed(now))), most)
    tail = min(tail, most - head)
    gone, came = before[head : len(before) - tail], now[head : len(now) - tail]
    return set(map(_NAME, gone)).symmetric_difference(map(_NAME, came))


def _edges_key(records: Records) -> str:
    """The edges key of a graph's records (empty: to be made by whoever needs it), without
    making a head left to be made."""
    if isinstance(records, PatchedRecords):
        return records.edges_key
    return records.head.edges_key


class PatchedRecords(Records):
    """The records of a patched graph, built; their head (the cache's columns of every file,
    which a probe made afresh and PageRank's key read, never `dependents`; the cache writer
    makes its own) is made the first time it is read, from the last head made and every record
    changed since: an edit copies no column of every file on the way to its answer. The paths
    are the last head's (none came or went)."""

    _made: Head | None
    _base: Head
    _pending: dict[str, FileIndex]

    def __init__(
        self,
        old: Records,
        again: dict[str, FileIndex],
        indexed_ns: int,
        edges: tuple[Any, ...],
        externals: dict[str, tuple[str, ...]],
        key: str,
        files: dict[str, FileIndex],
        made: Head | None = None,
    ) -> None:
        if isinstance(old, PatchedRecords) and old._made is None:
            self._base, self._pending = old._base, {**old._pending, **again}
        else:
            self._base, self._pending = old.head, dict(again)
        self.indexed_ns = indexed_ns
        self.edges_key = key
        self._edges = edges
        self._externals = externals

        def section(n: int) -> Any:
            return name_index(tuple(files.values())) if n == NAMES else None

        super().__init__(self._base, section, lambda: files, built=files)
        self._made = made

    @property
    def head(self) -> Head:
        """The head of these records, made on the first look."""
        if self._made is None:
            files = patched_head(self._base, self._pending, self.indexed_ns).files
            self._made = Head(
                self.indexed_ns, files, self._edges, self._externals, b"", (), self.edges_key
            )
            self._pending = {}
        return self._made

    @head.setter
    def head(self, head: Head) -> None:
        """What `Records.__init__` sets: the last head made, whose paths are these records'."""
        self._base = head


def _patch_adjacency(old: CodeGraph, new: CodeGraph, runs: dict[str, Run]) -> None:
    """Carry `old`'s adjacency over to `new`, whose edges differ only in the reference edges
    out of the sources of `runs` (each source's edges now): their rows are built again, every
    other row is shared (no whole-graph structure is rebuilt for a one-file edit). The import
    edges are the same."""
    if "imports" in old.__dict__:
        new.__dict__["imports"] = old.__dict__["imports"]
    if "out" not in old.__dict__:
        return
    before = old.__dict__["out"]
    out = dict(before)
    for source, (_start, _end, edges) in runs.items():
        row: dict[str, float] = {}
        for e in edges:
            row[e.target] = row.get(e.target, 0.0) + e.weight
        out[source] = row
    new.__dict__["out"] = out
    if "incoming" not in old.__dict__:
        return
    incoming = dict(old.__dict__["incoming"])
    copied: set[str] = set()
    for source in runs:
        for target in (*before[source], *out[source]):
            if target not in copied:
                incoming[target] = dict(incoming[target])
                copied.add(target)
            incoming[target].pop(source, None)
        for target, weight in out[source].items():
            incoming[target][source] = weight
    new.__dict__["incoming"] = incoming
