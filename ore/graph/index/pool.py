"""Parse many files on every core: forked children fed chunk numbers through a pipe.

The grammars and queries are loaded before the fork, so a child starts parsing at once. Chunk
numbers wait in a pipe that every process reads two bytes at a time (pipe reads that small are
atomic), so a core busy with other work simply takes fewer chunks. A child sends each chunk back
as one `marshal` message of plain rows (no pickled objects, no trees); a chunk whose message never
arrives (a child killed or crashed) is parsed by this process, so the result never depends on a
child. Where there is no `fork` (Windows), a process pool does the same work.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import select
import signal
import sys
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from .extract import Skipped, index_file
from .languages import parser_and_query
from .records import FileIndex

__all__ = [
    "PARALLEL_MIN",
    "Along",
    "Job",
    "Progress",
    "Result",
    "Work",
    "aside",
    "beside",
    "parse_all",
]

PARALLEL_MIN = 48
Work = tuple[str, str, str | None]
Result = FileIndex | Skipped | str
Progress = Callable[[int, int], None]


class Job(NamedTuple):
    """What each file goes through: `task(root, path, language, known)`, and how its result
    crosses the pipe (`encode` to plain tuples `marshal` can write, `decode` back). Module-level
    functions only, so the process pool can pickle them by name."""

    task: Callable[[str, str, str, str | None], Any]
    encode: Callable[[Any], Any]
    decode: Callable[[Any], Any]


class Along(NamedTuple):
    """More work on each file the index parses, done in the same worker right after the index
    read it, while the file's tree is still kept (`languages.parse`): `job` (its `known` is the
    digest the index was given), and `keep(root, record, result)` in this process. A query that
    will read every file's shape (clone detection) has them computed this way by a cold index,
    the file parsed once instead of twice."""

    job: Job
    keep: Callable[[Path, FileIndex, Any], None]


def _index_task(root: str, path: str, language: str, known: str | None) -> Result:
    return index_file(root, path, language, known)  # looked up at call time (tests patch it)


def beside(job: Job) -> Job:
    """The index's own job with `job` after it on each file the index parsed: `(record, result)`
    per file (the result None where the index kept a record or skipped the file)."""
    return Job(
        partial(_both, job.task),
        partial(_both_encode, job.encode),
        partial(_both_decode, job.decode),
    )


def _both(
    task: Callable[[str, str, str, str | None], Any],
    root: str,
    path: str,
    language: str,
    known: str | None,
) -> tuple[Result, Any]:
    result = _index_task(root, path, language, known)
    return result, task(root, path, language, known) if isinstance(result, FileIndex) else None


def _both_encode(encode: Callable[[Any], Any], pair: tuple[Result, Any]) -> tuple[Any, Any]:
    result, extra = pair
    return _encode(result), None if extra is None else encode(extra)


def _both_decode(decode: Callable[[Any], Any], row: tuple[Any, Any]) -> tuple[Result, Any]:
    result, extra = row
    return _decode(result), None if extra is None else decode(extra)


def parse_all(
    root: str,
    work: list[Work],
    jobs: int | None,
    progress: Progress | None,
    *,
    job: Job | None = None,
) -> list[Any]:
    """Index every `(path, language, known digest)` of `work`, in order, on up to `jobs` cores.

    Below `PARALLEL_MIN` files, or with one job, this process parses alone; elsewhere forked
    children help (a process pool where there is no fork). `progress(done, total)` is called as
    files finish (a library prints nothing: the CLI passes a progress line). `job` replaces what
    is done to each file (default: `index_file`).
    """
    job = job or _INDEX
    total = len(work)
    workers = min(jobs or _cores(), max(1, total // 16))
    if workers <= 1 or total < PARALLEL_MIN:
        results = []
        for done, (path, lang, known) in enumerate(work, 1):
            results.append(job.task(root, path, lang, known))
            if progress and (done % 50 == 0 or done == total):
                progress(done, total)
        return results
    if _FORK:
        return _forked(root, work, workers, progress, job)
    return _pool(root, work, workers, progress, job)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _forked(
    root: str, work: list[Work], workers: int, progress: Progress | None, job: Job
) -> list[Any]:
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
    results: list[Any] = [None] * total
    taken, queue = os.pipe()
    os.write(queue, b"".join(n.to_bytes(2, "little") for n in range(len(spans))))
    os.close(queue)
    children: dict[int, int] = {}  # result pipe -> pid
    buffers: dict[int, bytearray] = {}
    poller = select.poll()  # not select(): it fails on descriptors past 1023
    done = reported = 0
    try:
        for _ in range(workers - 1):
            child = _fork_child(root, work, spans, taken, list(children), job)
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
                results[i] = job.task(root, path, lang, known)
                if buffers:  # a child whose pipe is full waits until it is read (shapes are large)
                    done += _drain(poller, buffers, spans, results, job, block=False)
            done += end - start
            if buffers:
                done += _drain(poller, buffers, spans, results, job, block=False)
            if progress and done < total:
                progress(reported := done, total)
        while buffers:
            done += _drain(poller, buffers, spans, results, job, block=True)
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
                results[i] = job.task(root, path, lang, known)
    if progress:
        progress(total, total)
    return results


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
    root: str,
    work: list[Work],
    spans: list[tuple[int, int]],
    taken: int,
    inherited: list[int],
    job: Job,
) -> tuple[int, int] | None:
    """A worker parsing chunks until none is left, each chunk's rows sent back `marshal`led."""

    def parse_chunks(write: int) -> None:
        for fd in inherited:
            os.close(fd)
        while (n := _take(taken)) is not None:
            start, end = spans[n]
            rows = [job.encode(job.task(root, *work[i])) for i in range(start, end)]
            blob = marshal.dumps(rows)
            _write_all(write, len(blob).to_bytes(4, "little") + n.to_bytes(4, "little"))
            _write_all(write, blob)

    return _child_with_pipe(parse_chunks, wide=True)


def _child_with_pipe(body: Callable[[int], None], *, wide: bool = False) -> tuple[int, int] | None:
    """Fork a child that runs `body` with the write end of a pipe, then ends without cleanup
    (and ends with this process: `_die_with`); the read end and the child's pid, or None when
    the pipe or the fork could not be had. `wide`: a 1 MB pipe on Linux, so a child seldom
    waits for this process to read."""
    try:
        read, write = os.pipe()
    except OSError:
        return None
    if wide:
        with contextlib.suppress(ImportError, AttributeError, OSError):
            import fcntl

            fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, 1 << 20)
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return None
    if pid == 0:  # the child: never returns into the caller's code
        code = 1
        try:
            _die_with(parent)
            os.close(read)
            body(write)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    return read, pid


def _die_with(parent: int) -> None:
    """In a child: end when `parent` does, however it ends. A SIGTERM, SIGHUP or Ctrl-C that
    ends ORE ends the children through the `finally` of `_forked` (or their own copy of the
    handler); a parent killed outright (`kill -9`) is covered on Linux by the kernel's
    parent-death signal, elsewhere by the next write to the parent failing."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):  # no libc to load: the write failing still ends it
            import ctypes

            ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it died before the kernel was asked to tell
        os._exit(1)


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _drain(
    poller: select.poll,
    buffers: dict[int, bytearray],
    spans: list[tuple[int, int]],
    results: list[Any],
    job: Job,
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
                decoded = [job.decode(row) for row in marshal.loads(blob)]
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


@contextlib.contextmanager
def aside(
    task: Callable[[], Any],
    encode: Callable[[Any], Any],
    decode: Callable[[Any], Any],
    *,
    wanted: bool = True,
) -> Iterator[Callable[[], Any]]:
    """`task()` computed in a forked child while this process does other work: yields a call
    that returns its result (decoded from the child's `marshal` message of `encode(result)`).
    A child that fails, dies or cannot be forked leaves `task()` to this process, so the result
    never depends on the child; without fork, with one core or when not `wanted`, `task()` is
    simply called when its result is asked for. A child still running at the end is ended."""
    child = _aside_child(task, encode) if wanted and _FORK and _cores() > 1 else None
    done = False

    def result() -> Any:
        nonlocal done
        if child is not None and not done:
            done = True
            fd, pid = child
            blob = bytearray()
            while chunk := os.read(fd, 1 << 20):
                blob += chunk
            os.close(fd)
            _, status = os.waitpid(pid, 0)
            if status == 0 and blob:
                with contextlib.suppress(ValueError, TypeError, EOFError):
                    return decode(marshal.loads(blob))
        return task()

    try:
        yield result
    finally:
        if child is not None and not done:
            fd, pid = child
            os.close(fd)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)


def _aside_child(task: Callable[[], Any], encode: Callable[[Any], Any]) -> tuple[int, int] | None:
    """Fork a child that writes `marshal.dumps(encode(task()))` to a pipe and ends; the pipe's
    read end and the child's pid, or None when it could not be forked."""
    return _child_with_pipe(lambda write: _write_all(write, marshal.dumps(encode(task()))))


def _pool(
    root: str, work: list[Work], workers: int, progress: Progress | None, job: Job
) -> list[Any]:
    """Where there is no fork: a process pool (each worker loads the grammars itself)."""
    from concurrent.futures import ProcessPoolExecutor, as_completed

    size = max(4, min(32, len(work) // (workers * 16)))
    chunks = [work[i : i + size] for i in range(0, len(work), size)]
    results: list[list[Any]] = [[] for _ in chunks]
    done = 0
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(_chunk, root, chunk, job.task): n for n, chunk in enumerate(chunks)}
        for future in as_completed(futures):
            n = futures[future]
            results[n] = future.result()
            done += len(chunks[n])
            if progress:
                progress(done, len(work))
    return [r for chunk in results for r in chunk]


def _chunk(root: str, chunk: list[Work], task: Callable[..., Any]) -> list[Any]:
    return [task(root, path, lang, known) for path, lang, known in chunk]


_INDEX = Job(_index_task, _encode, _decode)
