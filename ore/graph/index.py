"""Bring the index of a root up to date: discover, check staleness, re-parse only what changed.

Staleness: a file whose size and mtime match its cached record is fresh (the fast path) unless
its mtime is within `RACY_NS` of the moment the record was taken, when the same-size edit could
hide inside one mtime tick (git's "racily clean" rule); then, as for every other file, the content
hash decides. Deleted files drop out, new files come in, and edges are rebuilt whenever any
record changed, because one new file can change how another file's imports resolve.
"""

from __future__ import annotations

import contextlib
import gc
import marshal
import os
import select
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import GraphError
from .cache import CachedIndex, read_cache, write_cache
from .discover import Candidate, discover
from .edges import build_edges
from .extract import Skipped, index_file
from .languages import parser_and_query
from .records import Edge, FileIndex
from .resolve import resolve_all

__all__ = ["PARALLEL_MIN", "RACY_NS", "Index", "check_root", "load_index"]

RACY_NS = 2_000_000_000
PARALLEL_MIN = 48
_Work = tuple[str, str, str | None]
Result = FileIndex | Skipped | str
Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class Index:
    """An up-to-date index of one root: records, edges, and what was skipped or re-parsed."""

    root: Path
    files: dict[str, FileIndex]
    edges: tuple[Edge, ...]
    externals: dict[str, tuple[str, ...]]
    skipped: dict[str, int] = field(default_factory=dict)
    parsed: int = 0


def check_root(root: str | os.PathLike[str]) -> Path:
    """The absolute, resolved root, or GraphError when it is not an existing folder."""
    path = Path(root).expanduser()
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError):
        raise GraphError(f"root '{root}' does not exist; pass --root with a folder") from None
    if not resolved.is_dir():
        raise GraphError(f"root '{root}' is not a folder; pass --root with a folder")
    return resolved


def load_index(
    root: str | os.PathLike[str], *, jobs: int | None = None, progress: Progress | None = None
) -> Index:
    """The index of `root`, reusing the cache for unchanged files and parsing the rest.

    :param jobs: worker processes for parsing (default: every core); 1 parses in-process.
    :param progress: called with (done, total) while parsing; default prints to a terminal stderr.
    """
    base = check_root(root)
    # The index is hundreds of thousands of small tuples that never form cycles: the cyclic GC
    # would only walk them again and again while they are built (a third of a warm query).
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _load(base, jobs, progress)
    finally:
        if enabled:
            gc.enable()


def _load(base: Path, jobs: int | None, progress: Progress | None) -> Index:
    found = discover(str(base))
    cached = read_cache(base)
    old = cached.files if cached else {}
    racy_after = (cached.indexed_ns if cached else 0) - RACY_NS
    files: dict[str, FileIndex] = {}
    work: list[_Work] = []
    moved: dict[str, Candidate] = {}
    for cand in found.files:
        prev = old.get(cand.path)
        if (
            prev is not None
            and prev.size == cand.size
            and prev.mtime_ns == cand.mtime_ns
            and prev.language == cand.language
            and cand.mtime_ns < racy_after
        ):
            files[cand.path] = prev
        else:
            usable = prev is not None and prev.language == cand.language
            work.append((cand.path, cand.language, prev.digest if usable and prev else None))
            moved[cand.path] = cand
    # largest first, in small chunks: no worker is left alone with one huge file at the end
    work.sort(key=lambda item: -moved[item[0]].size)
    started = time.time_ns()
    skipped: Counter[str] = Counter(found.skipped)
    changed = set(old) != {c.path for c in found.files}
    parsed = 0
    for (path, _lang, _known), result in zip(
        work, _run(str(base), work, jobs, progress), strict=True
    ):
        if isinstance(result, Skipped):
            skipped[str(result)] += 1
            changed = changed or path in old
        elif isinstance(result, FileIndex):
            files[path] = result
            parsed += 1
            changed = True
        else:  # same content, new stat: keep the record, refresh the fast-path key
            cand = moved[path]
            files[path] = replace(old[path], size=cand.size, mtime_ns=cand.mtime_ns)
    files = dict(sorted(files.items()))
    if cached is not None and not changed:
        edges, externals = cached.edges, cached.externals
    else:
        resolution = resolve_all(str(base), files)
        edges, externals = build_edges(files, resolution), resolution.externals
    if changed or work or cached is None:
        write_cache(base, CachedIndex(files, started, edges, externals))
    return Index(base, files, edges, externals, dict(sorted(skipped.items())), parsed)


def _run(root: str, work: list[_Work], jobs: int | None, progress: Progress | None) -> list[Result]:
    total = len(work)
    if progress is None and total >= PARALLEL_MIN and sys.stderr.isatty():
        progress = _print_progress
    workers = min(jobs or _cores(), max(1, total // 16))
    if workers <= 1 or total < PARALLEL_MIN:
        results = []
        for done, (path, lang, known) in enumerate(work, 1):
            results.append(index_file(root, path, lang, known))
            if progress and (done % 50 == 0 or done == total):
                progress(done, total)
        return results
    if _FORK:
        return _forked(root, work, workers, progress)
    return _pool(root, work, workers, progress)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _forked(root: str, work: list[_Work], workers: int, progress: Progress | None) -> list[Result]:
    """Parse on `workers` processes: this one and `workers - 1` forked children.

    The grammars and queries are loaded before the fork, so children start parsing at once.
    Chunk numbers wait in a pipe that every process reads two bytes at a time (pipe reads that
    small are atomic), so a busy core simply takes fewer chunks. A child sends each chunk back as
    one `marshal` message of plain rows (no pickled objects); a chunk whose message never came
    (a child that died) is parsed here, so the result never depends on the children.
    """
    for language in {lang for _path, lang, _known in work}:
        parser_and_query(language)
    total = len(work)
    size = max(4, min(32, total // (workers * 12)), -(-total // _MAX_CHUNKS))
    spans = [(start, min(start + size, total)) for start in range(0, total, size)]
    results: list[Result | None] = [None] * total
    taken, queue = os.pipe()
    os.write(queue, b"".join(n.to_bytes(2, "little") for n in range(len(spans))))
    os.close(queue)
    children: dict[int, int] = {}  # result pipe -> pid
    buffers: dict[int, bytearray] = {}
    poller = select.poll()  # not select(): it fails on descriptors past 1023
    done = reported = 0
    try:
        for _ in range(workers - 1):
            child = _fork_child(root, work, spans, taken, list(children))
            if child is None:
                break
            fd, pid = child
            children[fd] = pid
            buffers[fd] = bytearray()
            poller.register(fd, select.POLLIN)
        while (n := _take(taken)) is not None:
            start, end = spans[n]
            for i in range(start, end):
                path, lang, known = work[i]
                results[i] = index_file(root, path, lang, known)
            done += end - start
            if buffers:
                done += _drain(poller, buffers, spans, results, block=False)
            if progress and done < total:
                progress(reported := done, total)
        while buffers:
            done += _drain(poller, buffers, spans, results, block=True)
            if progress and reported < done < total:
                progress(reported := done, total)
    finally:
        os.close(taken)
        for fd in buffers:
            os.close(fd)
        for fd, pid in children.items():
            if fd in buffers:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGTERM)
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)
    for start, end in spans:  # what a failed child never sent
        if results[start] is None:
            for i in range(start, end):
                path, lang, known = work[i]
                results[i] = index_file(root, path, lang, known)
    if progress:
        progress(total, total)
    return results  # type: ignore[return-value]


_FORK = hasattr(os, "fork")
_MAX_CHUNKS = 4096  # two bytes each in the chunk pipe: far below any pipe's capacity
_HEAD = 8


def _take(fd: int) -> int | None:
    try:
        got = os.read(fd, 2)
    except OSError:
        return None
    return int.from_bytes(got, "little") if len(got) == 2 else None


def _fork_child(
    root: str, work: list[_Work], spans: list[tuple[int, int]], taken: int, inherited: list[int]
) -> tuple[int, int] | None:
    try:
        read, write = os.pipe()
    except OSError:
        return None
    with contextlib.suppress(ImportError, AttributeError, OSError):
        import fcntl  # Linux: a 1 MB pipe, so a child seldom waits for this process to read

        fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, 1 << 20)
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return None
    if pid == 0:  # the child: parse chunks until the pipe is empty, then leave without cleanup
        code = 1
        try:
            os.close(read)
            for fd in inherited:
                os.close(fd)
            while (n := _take(taken)) is not None:
                start, end = spans[n]
                rows = [_encode(index_file(root, *work[i])) for i in range(start, end)]
                blob = marshal.dumps(rows)
                _write_all(write, len(blob).to_bytes(4, "little") + n.to_bytes(4, "little"))
                _write_all(write, blob)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    return read, pid


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _drain(
    poller: select.poll,
    buffers: dict[int, bytearray],
    spans: list[tuple[int, int]],
    results: list[Result | None],
    *,
    block: bool,
) -> int:
    """Read what the children sent; returns how many files arrived. Closes pipes at EOF."""
    arrived = 0
    for fd, _event in poller.poll(None if block else 0):
        data = os.read(fd, 1 << 20)
        buf = buffers[fd]
        if not data:  # the child is done (or dead): a partial message is dropped, parsed here
            poller.unregister(fd)
            os.close(fd)
            del buffers[fd]
            continue
        buf += data
        while len(buf) >= _HEAD:
            length = int.from_bytes(buf[:4], "little")
            if len(buf) < _HEAD + length:
                break
            n = int.from_bytes(buf[4:_HEAD], "little")
            blob = bytes(buf[_HEAD : _HEAD + length])
            del buf[: _HEAD + length]
            try:
                start, end = spans[n]
                decoded = [_decode(row) for row in marshal.loads(blob)]
            except (ValueError, TypeError, EOFError, IndexError):
                continue  # never expected from our own child; the chunk is parsed here instead
            if len(decoded) == end - start:
                results[start:end] = decoded
                arrived += end - start
    return arrived


def _encode(result: Result) -> tuple[object, ...] | str:
    if isinstance(result, FileIndex):
        return result.to_row()
    if isinstance(result, Skipped):
        return (str(result),)
    return result


def _decode(row: tuple[object, ...] | str) -> Result:
    if isinstance(row, str):
        return row
    if len(row) == 1:
        return Skipped(row[0])
    return FileIndex.from_row(row)


def _pool(root: str, work: list[_Work], workers: int, progress: Progress | None) -> list[Result]:
    """Where there is no fork: a process pool (each worker loads the grammars itself)."""
    from concurrent.futures import ProcessPoolExecutor, as_completed

    size = max(4, min(32, len(work) // (workers * 16)))
    chunks = [work[i : i + size] for i in range(0, len(work), size)]
    results: list[list[Result]] = [[] for _ in chunks]
    done = 0
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(_chunk, root, chunk): n for n, chunk in enumerate(chunks)}
        for future in as_completed(futures):
            n = futures[future]
            results[n] = future.result()
            done += len(chunks[n])
            if progress:
                progress(done, len(work))
    return [r for chunk in results for r in chunk]


def _chunk(root: str, chunk: list[_Work]) -> list[Result]:
    return [index_file(root, path, lang, known) for path, lang, known in chunk]


def _print_progress(done: int, total: int) -> None:
    end = "\n" if done >= total else ""
    sys.stderr.write(f"\rindexing {done}/{total} files{end}")
    sys.stderr.flush()
