"""`WarmGraph`: one root's graph kept in memory by a long-lived process (`ore mcp`), checked for
changes before every answer.

A process per query pays for discovery (listing the tree), reading the cache's head and building
the adjacency, PageRank and the rest every time. A warm graph pays once; before each answer it
asks `Probe.changed`: a stat of every indexed file (size and mtime, the cache's fast path), of
every folder the discovery covers (a file added, deleted or renamed changes its folder's mtime)
and, for the few files whose mtime is within `RACY_NS` of the moment they were indexed, their
content hash (the cache's racy rule). Nothing changed: the same `CodeGraph` answers, with every
derived result it holds (adjacency, PageRank, communities, the judgment's shapes). Something
changed: the graph is opened again through `load_index`, which re-parses only the files whose
content changed and keeps PageRank and communities (by the edges' digest) and clone groups (by
the contents they read) when their inputs are the same.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .._fs import read_regular
from .graph import CodeGraph, open_graph
from .index.discover import SKIP_DIRS
from .index.extract import digest_of
from .index.load import RACY_NS, check_root

__all__ = ["Probe", "WarmGraph"]

#: Folders whose mtime says a file came or went (besides those holding indexed files): the
#: walk's own rules, so a folder the index never covers is never watched.
_MARKERS = ("pyvenv.cfg", ".git", "CACHEDIR.TAG")
#: A racy file larger than this is simply re-indexed rather than hashed on every call.
_HASH_MAX = 1 << 20


@dataclass
class Probe:
    """What the graph was built from, by stat: files (size, mtime), folders (mtime), and the
    racy files with their content digests."""

    root: str
    files: list[tuple[str, int, int]]
    folders: list[tuple[str, int]]
    racy: dict[str, str] = field(default_factory=dict)
    racy_until: int = 0

    @classmethod
    def of(cls, graph: CodeGraph) -> Probe:
        """The probe of a freshly opened graph (its head holds each file's stat and digest)."""
        root = str(graph.root)
        head = graph.index.files.head
        paths, _languages, sizes, mtimes, digests = head.files[:5]
        files = [
            (os.path.join(root, p), size, mtime)
            for p, size, mtime in zip(paths, sizes, mtimes, strict=True)
        ]
        racy_after = head.indexed_ns - RACY_NS
        racy = {
            os.path.join(root, p): digest
            for p, mtime, digest in zip(paths, mtimes, digests, strict=True)
            if mtime >= racy_after
        }
        return cls(root, files, _folders(root, paths), racy, head.indexed_ns + RACY_NS)

    def changed(self) -> bool:
        """Whether any indexed file, watched folder or racy file's content differs now."""
        for path, size, mtime in self.files:
            try:
                info = os.stat(path)
            except OSError:
                return True
            if info.st_size != size or info.st_mtime_ns != mtime:
                return True
        for path, mtime in self.folders:
            try:
                if os.stat(path).st_mtime_ns != mtime:
                    return True
            except OSError:
                return True
        return bool(self.racy) and self._racy_changed()

    def _racy_changed(self) -> bool:
        """The racy files' contents against their digests; once the racy window has passed, a
        file whose content still matches leaves the racy set (any later edit moves its mtime)."""
        settled = time.time_ns() >= self.racy_until
        for path, digest in list(self.racy.items()):
            try:  # a regular file only, read without blocking (a FIFO planted there is a change)
                data = read_regular(path, limit=_HASH_MAX, follow_symlinks=True)
            except (OSError, ValueError):
                return True
            if len(data) > _HASH_MAX or digest_of(data) != digest:
                return True
            if settled:
                del self.racy[path]
        return False


def _folders(root: str, paths: Sequence[str]) -> list[tuple[str, int]]:
    """Every folder holding an indexed file or kept by the walk's rules, with its mtime (the
    root's `.git/index` too: git lists what it tracks from there)."""
    names = {""}
    for p in paths:
        folder = p.rpartition("/")[0]
        while folder not in names:
            names.add(folder)
            folder = folder.rpartition("/")[0]
    stack = [""]
    while stack:
        rel = stack.pop()
        base = os.path.join(root, rel) if rel else root
        try:
            with os.scandir(base) as listing:
                entries = list(listing)
        except OSError:
            continue
        if rel and any(e.name in _MARKERS for e in entries):
            continue
        for e in entries:
            try:
                is_dir = e.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir and not (e.name.startswith(".") or e.name in SKIP_DIRS):
                child = f"{rel}/{e.name}" if rel else e.name
                names.add(child)
                stack.append(child)
    watched = [os.path.join(root, n) if n else root for n in sorted(names)]
    watched.append(os.path.join(root, ".git", "index"))
    found = []
    for path in watched:
        try:
            info = os.stat(path)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) or path.endswith("index"):
            found.append((path, info.st_mtime_ns))
    return found


class WarmGraph:
    """The graph of one root, fixed at start, kept in memory and refreshed only when the tree
    changed (`graph()`); `refreshes` counts the times it was opened again."""

    def __init__(self, root: str | os.PathLike[str], *, jobs: int | None = None) -> None:
        self.root: Path = check_root(root)
        self._jobs = jobs
        self._graph: CodeGraph | None = None
        self._probe: Probe | None = None
        self.refreshes = 0

    def graph(self) -> CodeGraph:
        """The up-to-date graph: the one in memory when nothing changed since it was opened."""
        if self._graph is not None and self._probe is not None and not self._probe.changed():
            return self._graph
        graph = open_graph(self.root, jobs=self._jobs)
        graph.index.files.all()  # every record in memory: no later read of a replaced cache
        graph.index.files.names()
        self._probe = Probe.of(graph)
        self._graph = graph
        self.refreshes += 1
        return graph
