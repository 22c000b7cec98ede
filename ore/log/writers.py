"""The records still being written to the turn log after their turn's process exited
(`ore.cli.ending` leaves the write to a child): each such child holds a shared lock on `log.db-writers` next to the log
until its record is in, and a reader of the log first takes that lock exclusively for a
moment (`settle`), so that it sees every turn whose `ore` process has ended: `ore log show
-1` and `--continue` right after a turn find it.

The lock file is untrusted as the log is: opened without following a symlink and without
blocking on a FIFO, and used only when it is a regular file. When it cannot be had, the
writer writes before exiting (`hold` gives None) and the reader does not wait.
"""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path

__all__ = ["WRITERS_SUFFIX", "hold", "settle"]

#: The lock file's name is the log's name plus this.
WRITERS_SUFFIX = "-writers"
_POLL_SECONDS = 0.005


def _open(path: Path, *, create: bool) -> int | None:
    """The lock file of the log at `path`, open (`ore._fs.open_lock`)."""
    from .._fs import open_lock  # here: a turn that writes its record at once needs no lock

    if create:
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError:
            return None
    return open_lock(f"{path}{WRITERS_SUFFIX}", create=create)


def hold(path: Path) -> int | None:
    """A shared hold on the log at `path`'s writers lock, for a record written after its
    process exits (the descriptor, inherited by the child that writes, is closed when it is
    done); None when it cannot be had: write before exiting then."""
    import fcntl

    fd = _open(path, create=True)
    if fd is None:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:  # a reader holds it this moment, or locks are not supported here
        os.close(fd)
        return None
    return fd


def settle(path: Path, timeout: float) -> None:
    """Wait, up to `timeout` seconds, until no record of an ended turn is still being written
    to the log at `path`."""
    import fcntl
    import time

    fd = _open(path, create=False)
    if fd is None:
        return
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return  # read what is there: the writer's own line says why it is late
                time.sleep(_POLL_SECONDS)
            except OSError:
                return
            else:
                return
    finally:
        with suppress(OSError):
            os.close(fd)  # releases the lock
