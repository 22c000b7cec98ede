"""Locks: the one way ORE serialises writers of a file (`flock` on a lock file that is never
opened through a symlink, never waited on as a FIFO).
"""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager

from .words import StrPath

__all__ = ["exclusive_lock", "open_lock"]


def open_lock(lock_path: StrPath, *, create: bool) -> int | None:
    """A descriptor of the lock file `lock_path` for `flock` (created 0600 with `create`), or
    None when it is missing, cannot be opened, or is not a regular file: never through a
    symlink, never waiting on a FIFO (a lock held elsewhere is not a reason to block here)."""
    flags = os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(lock_path, flags | os.O_CREAT if create else flags, 0o600)
    except OSError:
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


@contextmanager
def exclusive_lock(lock_path: StrPath) -> Iterator[None]:
    """Hold an exclusive `flock` on `lock_path` (created 0600, never through a symlink) for the
    `with` block: the one way ORE serialises writers of a file.

    A lock file unlinked by its holder (deleting what it guards) is stale for whoever waited on
    it: the waiter sees its descriptor no longer names the path, and takes a fresh one.
    """
    while True:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.path.samestat(os.fstat(fd), os.stat(lock_path)):
                break
        except FileNotFoundError:
            pass
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    try:
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
