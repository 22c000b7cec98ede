"""`WarmGraph`: one root's graph kept in memory by a long-lived process (`ore mcp`), brought up
to date before every answer, re-parsing only what changed.

A process per query pays for discovery (listing the tree), reading the cache's head and building
the adjacency, PageRank and the rest every time. A warm graph pays once. Before each answer:

- on Linux an inotify watch of the tree's folders (`watch.Watch`) names what changed since the
  last answer in one system call; nothing: the same `CodeGraph` answers, with every derived
  result it holds (adjacency, PageRank, the judgment's shapes). Without inotify, or when the
  watch lost events, the probe stats every indexed file and folder instead (`probe.Probe`: the
  cache's staleness rule, size and mtime, then the content hash of racy files);
- files that changed (no source file came or went): the graph is patched in memory
  (`patch.patch`: those files alone parsed again, and only what their change can move built
  again). The cache (and the judgment's shapes file) is written behind the answer (`_Writer`:
  the latest state wins), so `ore graph` agrees without the caller waiting for it;
- a source file or folder came or went: the graph is opened again through `load_index`
  (discovery, the cache, the changed files parsed; PageRank and communities kept by the edges'
  digest, clone groups by the contents they read).

Right after the graph is opened, the next call stats everything once: an edit made between
discovery and the start of the watch is seen too. With `ahead` (`ore mcp`), a thread runs the
same refresh as soon as the files the watch reports are whole (closed after their writes:
`_Ahead`), so the reading runs while a call made at once is still on its way, and a call coming
later finds it done.
"""

from __future__ import annotations

import contextlib
import os
import select
import stat
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from ..errors import GraphError
from .graph import CodeGraph, open_graph
from .index.load import check_root
from .patch import Links, PatchedRecords, patch
from .probe import Probe
from .watch import Watch

__all__ = ["WarmGraph"]


class WarmGraph:
    """The graph of one root, fixed at start, kept in memory and refreshed only when the tree
    changed (`graph()`); `refreshes` counts the times it was opened through discovery, `patches`
    the times only changed files were parsed again in memory."""

    def __init__(
        self, root: str | os.PathLike[str], *, jobs: int | None = None, ahead: bool = False
    ) -> None:
        self.root: Path = check_root(root)
        self._root_id = _identity(self.root)  # the folder itself, not its path (`same_root`)
        self._jobs = jobs
        self._lock = threading.RLock()  # one refresh at a time (a call's, or the read ahead's)
        self._ahead: _Ahead | None = _Ahead(self) if ahead else None
        self._graph: CodeGraph | None = None
        self._probe: Probe | None = None
        self._watch: Watch | None = None
        self._check = True  # the next call stats everything, whatever the watch says
        self._writer = _Writer()
        self._links: Links | None = None  # the imports resolved at the last patch
        from .judgment import lineindex, shapecache

        shapecache.DEFERRED[self.root] = partial(self._writer.write, "shapes")
        lineindex.keep(self.root)  # snippets compared only with the files sharing a line
        self.refreshes = 0
        self.patches = 0

    def graph(self) -> CodeGraph:
        """The up-to-date graph: the one in memory when nothing changed since the last call."""
        with self._lock:
            self.same_root()
            try:
                return self._refreshed()
            except BaseException:
                self._check = True  # the events it drained are not lost: the next call stats
                raise

    def _refreshed(self) -> CodeGraph:
        if self._graph is None or self._probe is None:
            return self._open()
        touched = None if self._watch is None else self._watch.touched()
        if touched is not None and not touched and not self._check and not self._probe.links:
            return self._graph
        change = self._probe.changed(None if self._check else touched)
        self._check = False
        if change is None:
            return self._graph
        if change.folders:
            return self._open()
        found = patch(self._graph, change.files, self._writer, self._links)
        if found is None:
            return self._open()
        patched, self._links = found
        records = patched.index.files
        again = {rel: records[rel] for rel in change.files}
        assert isinstance(records, PatchedRecords)
        self._probe.patched(again, records.indexed_ns)
        self._graph = patched
        self.patches += 1
        return patched

    def _open(self) -> CodeGraph:
        """The graph from `load_index`: discovery, the cache, every changed file parsed."""
        self._writer.flush()  # the cache load_index reads is the latest this process made
        began = time.time_ns()
        graph = open_graph(self.root, jobs=self._jobs)
        records = graph.index.files
        records.all()  # every record in memory: no later read of a cache replaced since
        records.names()
        graph.kept = True
        self._probe = Probe.of(str(self.root), records, since=began)
        if self._watch is not None:
            self._watch.close()
        self._watch = Watch.start(self._probe.folders)
        if self._ahead is not None:
            self._ahead.watch(self._watch)
        self._check = True  # an edit between discovery and the watch: the next call stats
        self._links = None
        self._graph = graph
        self.refreshes += 1
        return graph

    def same_root(self) -> None:
        """GraphError unless the root path still names the folder the graph started on: a
        root removed, renamed away, or swapped for a symbolic link (to a folder outside it) is
        never read through; a server asks to be started again instead."""
        try:
            now = _identity(self.root, follow=False)
        except OSError:
            now = None
        if now != self._root_id:
            raise GraphError(
                f"the root {self.root} is no longer the folder this server started on (it was "
                "removed, moved or replaced); start the server again on the folder to serve"
            )

    def close(self) -> None:
        """Finish writing the cache and stop watching the tree."""
        from .judgment import lineindex, shapecache

        if self._ahead is not None:
            self._ahead.stop()
        shapecache.DEFERRED.pop(self.root, None)
        lineindex.forget(self.root)
        self._writer.flush()
        if self._watch is not None:
            self._watch.close()
            self._watch = None


def _identity(path: Path, *, follow: bool = True) -> tuple[int, int] | None:
    """A folder's identity (device, inode); None when `path` is not a folder (without `follow`,
    a symbolic link is not one)."""
    st = os.stat(path) if follow else os.lstat(path)
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


class _Ahead:
    """Reads an edit when its events arrive, not when the next call does (`WarmGraph(...,
    ahead=True)`, what `ore mcp` uses): a thread waits on the inotify watch and brings the
    graph up to date (the same `graph()` a call runs, under the same lock) as soon as the
    files written are whole (`Watch.settled`: closed after their writes), so the reading runs
    while the call that follows an edit is still on its way (its pipe, the server's threads)
    and a call coming later finds it done. A call arriving first reads the edit itself; one
    arriving during the reading waits for it (the lock). A file still open for writing, gone,
    or a folder event is read once the events stop for `QUIET` seconds. A failed refresh is
    left to the next call, which does it again and answers its error."""

    QUIET = 0.01

    def __init__(self, warm: WarmGraph) -> None:
        self._warm = warm
        self._current: Watch | None = None
        self._wake_r, self._wake_w = os.pipe()
        self._stopped = False
        self._thread: threading.Thread | None = None

    def watch(self, watch: Watch | None) -> None:
        """Wait on `watch` from now on (a graph opened again has a new one)."""
        self._current = watch
        if self._thread is None and watch is not None:
            self._thread = threading.Thread(target=self._run, name="ore-ahead", daemon=True)
            self._thread.start()
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"w")

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self._wake_r, select.POLLIN)
        watched = None
        registered = -1  # the descriptor waited on (a closed watch no longer tells its own)
        while not self._stopped:
            current = self._current
            if current is not watched:
                with contextlib.suppress(KeyError, ValueError):
                    if registered >= 0:
                        poller.unregister(registered)
                registered = -1 if current is None else current.fileno()
                with contextlib.suppress(ValueError):
                    if registered >= 0:
                        poller.register(registered, select.POLLIN)
                watched = current
            try:
                events = poller.poll(1000)  # a watch closed under the wait: seen within a second
            except OSError:
                continue
            for fd, _mask in events:
                if fd == self._wake_r:
                    with contextlib.suppress(OSError):
                        os.read(self._wake_r, 64)
                elif not self._stopped and watched is not None and fd == registered:
                    self._settle(watched)
                    with contextlib.suppress(Exception):
                        self._warm.graph()

    def _settle(self, watch: Watch) -> None:
        """Return once the files written are whole (at once for an editor's save: written,
        then closed), or once no event has come for `QUIET` seconds (a file left open, gone,
        a folder): a file emptied, then written, is read once, not half-written (which can
        change every edge twice)."""
        while not self._stopped and not watch.settled():
            try:
                ready = select.select([watch.fileno()], [], [], self.QUIET)[0]
            except (OSError, ValueError):
                return
            if not ready:
                watch.quiet()
                return

    def stop(self) -> None:
        self._stopped = True
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"s")
        if self._thread is not None:
            self._thread.join(timeout=5)
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)


class _Writer:
    """Writes files beside the index (the index itself, the judgment's shapes) on a thread of
    its own once calls pause for `DELAY` seconds, the latest of each only: the answer never
    waits for the disk, and a burst of edits is written once. The pause is a second, not less:
    encoding the shapes holds the interpreter for tens of milliseconds, which a call arriving
    meanwhile would wait out (an agent's edit-then-ask comes well within a second). A failed
    write only costs the next run time, as everywhere in the cache; `close` writes at once.
    `write` never wakes the thread: it looks for work once a `DELAY` while idle (a wake-up
    costs the call that made it a thread switch, 2 ms on a busy machine, more than reading a
    one-line edit now takes)."""

    DELAY = 1.0

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._pending: dict[str, Callable[[], object]] = {}
        self._due = 0.0
        self._urgent = False
        self._writing = False
        self._thread: threading.Thread | None = None

    def write(self, what: str, job: Callable[[], object]) -> None:
        """Run `job` soon, unless another job for `what` comes first (it replaces this one)."""
        with self._lock:
            self._pending[what] = job
            self._due = time.monotonic() + self.DELAY
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ore-cache", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._pending:
                    self._lock.wait(self.DELAY)
                while not self._urgent and (left := self._due - time.monotonic()) > 0:
                    self._lock.wait(left)
                jobs = list(self._pending.values())
                self._pending.clear()
                self._writing = True
            for job in jobs:
                with contextlib.suppress(Exception):
                    job()
            with self._lock:
                self._writing = False
                self._lock.notify_all()

    def flush(self) -> None:
        """Run what is waiting now, and return once it is done."""
        with self._lock:
            self._urgent = True
            self._lock.notify_all()
            while self._pending or self._writing:
                self._lock.wait()
            self._urgent = False
