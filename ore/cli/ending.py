"""How the `ore` program ends: its output flushed, its exit handlers run, then `os._exit`, and
what was left for after the answer (the turn's log record) done by a child forked at that
moment, so that the caller has the exit status without waiting for it.

Why `os._exit`: the interpreter's own teardown frees every object one by one and collects the
whole heap once more: 50 to 80 ms of a 400 ms turn on a 2-core machine (bench/README.md), work
that nobody waits for once stdout is flushed and the exit handlers have run (`ore._fs`'s temp
file clean-up is one). Only for the executable (`ore.cli.program` enters `ending()`; a
program calling `ore.cli.main()` keeps Python's own way out), and only with no other thread
alive: a thread could still be writing something, and a fork copies only the thread that
forks.

Why a child for the log: writing the record costs a turn 5 to 10 ms (SQLite's loading, the
log's code, one transaction; docs/log.md "Cost"), and the answer is out by then. Only when
stderr is a terminal, where a person waits for the prompt: the child keeps stderr, so a
record that cannot be written is still one warning line there. Anywhere else a program ran
`ore`, and it may read `log.db` itself the moment `ore` exits (a pipe's reader would wait for
the child anyway, a file's could miss its line): the record is written before the exit there,
as in a REPL. Stdin and stdout the child lets go at once, so `answer=$(ore ...)` at a
terminal returns with the parent. Ctrl-C and a hang-up right after the answer do not cut the
record short (they are ignored from the moment the exit begins, so the child is born ignoring
them; the terminal's hang-up when `ore` owns it is one); SIGTERM and SIGKILL still end it,
which WAL makes safe (the turn is then not logged). Where `ore` is process 1 of a PID
namespace, whose exit kills the whole namespace, nothing is deferred. Readers of the log wait
for such children first (`ore.log.writers.settle`): `ore log show -1` and `--continue` right
after a turn find it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import NoReturn

__all__ = ["after_exit", "deferring", "end", "ending", "until_exit"]

_left: list[Callable[[], None]] | None = None  # None: not the program, nothing is deferred
_held: list[object] = []  # what `until_exit` keeps from its own clean-up


@contextmanager
def ending() -> Iterator[list[Callable[[], None]]]:
    """While `main()` runs as the program: `after_exit` defers work to `end`, which is given
    the list. An error escaping `main()` does the work before it goes on."""
    global _left
    left: list[Callable[[], None]] = []
    _left = left
    try:
        yield left
    except BaseException:
        _left = None
        _run(left)
        raise
    finally:
        _left = None


def deferring() -> bool:
    """Whether `after_exit` defers: `main()` is the program and its stderr is a terminal, where
    a person waits for the prompt. Anything else is a program's (a pipe, a file, /dev/null, or
    none): it may read the log the moment `ore` exits, a pipe's reader would wait for the child
    anyway and a file's could miss its line, so the work is done before the exit then. Nor
    when `ore` is process 1 of its PID namespace (`docker run -it ... ore`, `unshare -pf`):
    its exit kills every process left in the namespace, the child too."""
    return _left is not None and os.isatty(2) and os.getpid() != 1


def after_exit(work: Callable[[], None]) -> bool:
    """Leave `work` for after the exit status is given (see `end`); False when it is not left
    (see `deferring`): do it now then."""
    if not deferring():
        return False
    assert _left is not None
    _left.append(work)
    return True


def until_exit(thing: object) -> bool:
    """Keep `thing` until the program's exit, which drops it with the process, never through its
    own clean-up; False when `main()` is not the program (its caller cleans it up then). For
    the turn log's connection: closing it is a checkpoint or a second connection to avoid one
    (`ore.log.records.close_written`), and a process that exits holding it leaves the log as a
    writer killed after its commit does, whole. With other threads alive the exit goes
    through `sys.exit`, and the interpreter's teardown cleans it up as usual."""
    if _left is None:
        return False
    _held.append(thing)
    return True


def end(code: int, work: list[Callable[[], None]]) -> NoReturn:
    """Exit with `code`: `work` (what `after_exit` left) is done by a forked child (inline when
    no child can be made), and this process leaves through `os._exit` after flushing and its
    exit handlers; with other threads alive, through `sys.exit` as usual, the work done first."""
    import threading

    if work:
        _ignore_interrupts()
    if threading.active_count() > 1:
        _run(work)
        sys.exit(code)
    import atexit

    for stream in (sys.stdout, sys.stderr):
        with suppress(AttributeError, OSError, ValueError):
            stream.flush()
    atexit._run_exitfuncs()
    if work and not _forked(work):
        _run(work)
        with suppress(AttributeError, OSError, ValueError):
            sys.stderr.flush()
    os._exit(code)


def _forked(work: list[Callable[[], None]]) -> bool:
    """Do `work` in a child of this process; False when no child could be made."""
    try:
        pid = os.fork()
    except OSError:
        return False
    if pid != 0:
        return True
    try:  # the child: never returns; Ctrl-C and a hang-up were ignored before it was made
        import _signal  # type: ignore[import-not-found]  # as ore.cli.command does

        _signal.signal(_signal.SIGTERM, _signal.SIG_DFL)
        quiet = os.open(os.devnull, os.O_RDWR)
        os.dup2(quiet, 0)
        os.dup2(quiet, 1)
        _run(work)
        with suppress(AttributeError, OSError, ValueError):
            sys.stderr.flush()
    finally:
        os._exit(0)


def _ignore_interrupts() -> None:
    """Ctrl-C and a hang-up ignored from here on, before the child is forked, which inherits
    that: the exit status is decided, and the work left must not be cut short. Set in the child
    instead, they came too late: when `ore` owns its terminal (`ssh -t host ore ...`, a tmux
    window, `script -c`), its exit hangs the terminal up and the kernel sends SIGHUP to the
    foreground group within a millisecond, which killed the child before its first lines ran
    (7 records of 20 lost, with no line said); and a Ctrl-C landing in Python's own fork
    hooks printed a traceback."""
    import _signal

    for signum in (_signal.SIGINT, _signal.SIGHUP):
        _signal.signal(signum, _signal.SIG_IGN)


def _run(work: list[Callable[[], None]]) -> None:
    for each in work:
        each()
