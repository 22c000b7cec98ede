"""`Probe`: what changed in a tree since its graph was opened, by stat, without listing the tree.

The cache's staleness rule, held in memory: an indexed file whose size and mtime match its record
is unchanged, unless its mtime is within `RACY_NS` of the moment it was indexed (a same-size edit
could hide inside one mtime tick), when its content hash decides. A file can only come or go
through its folder, whose mtime then moves: a folder whose mtime moved is listed again (by the
walk's rules) and compared with the source files and subfolders the index holds there, so an
editor's atomic save or swap file is no change, and a new or deleted source file is one (only
discovery can say what it means: the caller opens the graph again).

`changed()` stats every indexed file and folder; `changed(paths)` only the paths an inotify
watch named (`watch.Watch`), each a file or folder inside the root.

What else decides what discovery lists is watched too (`others`), and any move of it is a change
for discovery: a source file the index skipped (binary, too large; fixed in place, its folder's
mtime stays), a `.gitignore` (its folder's listing counts it; an edit is its stat), and
`.git/info/exclude` (stat only: inotify does not watch `.git`, so under the watch it is seen at
the next full look). A folder changed while the graph was opening (`of(since=)`) is listed again
at the next look: a file made after discovery listed it is not lost. An indexed file that is a
symbolic link is stat'ed at every look (`links`): an edit of its target moves its stat, and
the event names only the target.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .._fs import read_regular
from .index.discover import SKIP_DIRS
from .index.extract import digest_of
from .index.languages import language_for
from .index.load import RACY_NS
from .index.records import FileIndex
from .index.stored import Records

__all__ = ["Change", "Probe"]

#: Files whose presence makes the walk skip a folder (`discover._MARKERS`).
_MARKERS = ("pyvenv.cfg", ".git", "CACHEDIR.TAG")
#: A folder's ignore file: git reads it to say what discovery lists.
_IGNORE = os.sep + ".gitignore"
#: Bundles discovery never indexes (`discover._minified`).
_MINIFIED = (".min.js", ".min.mjs", ".min.cjs", ".bundle.js")
#: A file system's coarsest mtime tick (a second): a folder changed this long before discovery
#: began may have changed after it.
_COARSE_NS = 1_000_000_000
#: A racy file larger than this is simply parsed again rather than hashed.
_HASH_MAX = 1 << 20


@dataclass(frozen=True)
class Change:
    """What a probe saw: indexed files whose stat or content moved, and whether a folder's
    source files or subfolders did (a file came or went)."""

    files: frozenset[str]
    folders: bool


@dataclass
class Probe:
    """Each indexed file's stat (by absolute path: relative path, size, mtime), each watched
    folder's mtime and listing, and the racy files' digests."""

    root: str
    files: dict[str, tuple[str, int, int]]
    folders: dict[str, int]
    listed: dict[str, frozenset[str]]
    racy: dict[str, str] = field(default_factory=dict)
    racy_until: int = 0
    #: What else decides what the index holds, by stat: source files the index skipped (binary,
    #: too large: fixed, they are indexed again) and the ignore files git reads.
    others: dict[str, tuple[int, int] | None] = field(default_factory=dict)
    #: Indexed files that are symbolic links: an edit of the target names the target, which a
    #: watch need not report, so they are looked at on every look.
    links: list[str] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        root: str,
        records: Records,
        folders: dict[str, int] | None = None,
        *,
        since: int | None = None,
    ) -> Probe:
        """The probe of freshly opened records (the head holds each file's stat and digest);
        `folders` when they are known unchanged since the last probe. `since`: when discovery
        began; a folder changed since then may hold a file discovery did not see, so its
        listing is compared at the next look (a file made while the graph opened is not lost)."""
        head = records.head
        paths, _languages, sizes, mtimes, digests = head.files[:5]
        join = os.path.join
        files = {
            join(root, p): (p, size, mtime)
            for p, size, mtime in zip(paths, sizes, mtimes, strict=True)
        }
        racy_after = head.indexed_ns - RACY_NS
        racy = {
            join(root, p): digest
            for p, mtime, digest in zip(paths, mtimes, digests, strict=True)
            if mtime >= racy_after
        }
        others: dict[str, tuple[int, int] | None] = {}
        links: list[str] = []
        if folders is None:
            folders = _folders(root, paths, others, links)
        if since is not None:  # -1: no mtime matches, so the next look lists the folder
            recent = since - _COARSE_NS
            folders = {k: (-1 if v >= recent else v) for k, v in folders.items()}
        others[os.path.join(root, ".git", "info", "exclude")] = _stat(
            os.path.join(root, ".git", "info", "exclude")
        )
        listed: dict[str, set[str]] = {}
        for path in folders:
            parent, _, name = path.rpartition(os.sep)
            if path != root and not _skipped_folder(name):
                listed.setdefault(parent, set()).add(name + "/")
        for path in [*files, *(p for p in others if p.endswith(_IGNORE))]:
            parent, _, name = path.rpartition(os.sep)
            listed.setdefault(parent, set()).add(name)
        sets = {k: frozenset(v) for k, v in listed.items()}
        return cls(root, files, folders, sets, racy, head.indexed_ns + RACY_NS, others, links)

    def patched(self, records: Mapping[str, FileIndex], indexed_ns: int) -> None:
        """Take the stats of files parsed again at `indexed_ns` (no file came or went, so the
        folders and their listings stand)."""
        for rel, record in records.items():
            path = os.path.join(self.root, rel)
            self.files[path] = (rel, record.size, record.mtime_ns)
            if record.mtime_ns >= indexed_ns - RACY_NS:
                self.racy[path] = record.digest
            else:
                self.racy.pop(path, None)
        self.racy_until = indexed_ns + RACY_NS

    def changed(self, paths: Iterable[str] | None = None) -> Change | None:
        """What changed since the graph was opened (None: nothing): of every file and folder,
        or of `paths` alone (files or folders inside the root that an event named)."""
        if paths is None:
            files, folders = list(self.files), list(self.folders)
            others: Iterable[str] = self.others
        else:
            files, folders, others = list(self.links), [], []
            for path in set(paths).difference(self.links):
                if path in self.files:
                    files.append(path)
                elif path in self.others or os.path.basename(path) == ".gitignore":
                    others.append(path)
                else:  # a file that came or went, or a folder: its folder's listing decides
                    folders.append(path if path in self.folders else os.path.dirname(path))
        for path in others:  # a skipped file or an ignore file moved: discovery decides
            if _stat(path) != self.others.get(path, ()):
                return Change(frozenset(), True)
        moved = []
        for path in files:
            rel, size, mtime = self.files[path]
            try:
                info = os.stat(path)
            except OSError:
                moved.append(rel)
                continue
            if info.st_size != size or info.st_mtime_ns != mtime or self._racy_moved(path):
                moved.append(rel)
        for path in dict.fromkeys(folders):
            if path not in self.folders:
                return Change(frozenset(moved), True)  # a new folder, or outside what we know
            try:
                now = os.stat(path).st_mtime_ns
            except OSError:
                return Change(frozenset(moved), True)
            if now != self.folders[path]:
                if not self._same_listing(path):
                    return Change(frozenset(moved), True)
                self.folders[path] = now
        return Change(frozenset(moved), False) if moved else None

    def _racy_moved(self, path: str) -> bool:
        """For a racy file (same stat): whether its content differs from its digest. Once the
        racy window has passed, a file whose content still matches leaves the racy set (any
        later edit moves its mtime)."""
        digest = self.racy.get(path)
        if digest is None:
            return False
        try:  # a regular file only, read without blocking (a FIFO planted there is a change)
            data = read_regular(path, limit=_HASH_MAX, follow_symlinks=True)
        except (OSError, ValueError):
            return True
        if len(data) > _HASH_MAX or digest_of(data) != digest:
            return True
        if time.time_ns() >= self.racy_until:
            del self.racy[path]
        return False

    def _same_listing(self, folder: str) -> bool:
        """Whether `folder` holds the same source files, `.gitignore` and subfolders as when
        indexed (by the walk's rules; a file the index skipped reads as a change: discovery
        decides)."""
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            return False
        if folder != self.root and any(e.name in _MARKERS for e in entries):
            return False
        found = set()
        for e in entries:
            try:
                is_dir = e.is_dir(follow_symlinks=False)
            except OSError:
                return False
            if is_dir:
                if not _skipped_folder(e.name):
                    found.add(e.name + "/")
            elif e.name == ".gitignore" or (
                language_for(e.name) is not None and not e.name.endswith(_MINIFIED)
            ):
                found.add(e.name)
        return found == self.listed.get(folder, frozenset())


def _stat(path: str) -> tuple[int, int] | None:
    """(size, mtime) of the file at `path`, following links; None when there is none."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


def _skipped_folder(name: str) -> bool:
    return name.startswith(".") or name in SKIP_DIRS


def _folders(
    root: str,
    paths: Sequence[str],
    others: dict[str, tuple[int, int] | None],
    links: list[str],
) -> dict[str, int]:
    """Every folder holding an indexed file or kept by the walk's rules, with its mtime; in
    `others`, the stat of each source file there the index does not hold (skipped) and of each
    `.gitignore`; in `links`, the indexed files that are symbolic links."""
    indexed = set(paths)
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
            if is_dir and not _skipped_folder(e.name):
                child = f"{rel}/{e.name}" if rel else e.name
                names.add(child)
                stack.append(child)
            elif not is_dir:
                child = f"{rel}/{e.name}" if rel else e.name
                if child in indexed:
                    if e.is_symlink():
                        links.append(e.path)
                elif e.name == ".gitignore" or (
                    language_for(e.name) is not None and not e.name.endswith(_MINIFIED)
                ):
                    others[e.path] = _stat(e.path)
    found = {}
    for name in sorted(names):
        path = os.path.join(root, name) if name else root
        try:
            found[path] = os.stat(path).st_mtime_ns
        except OSError:
            continue
    return found
