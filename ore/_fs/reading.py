"""Reading a file that may be hostile: a read never blocks (a FIFO or device is opened
O_NONBLOCK and refused after `fstat`) and is bounded; a listing never enters a symlinked folder.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .words import NotRegularFile, StrPath

if TYPE_CHECKING:  # only named: importing pathlib costs a turn's start 3-4 ms
    from pathlib import Path

__all__ = ["list_names", "open_regular", "read_fd", "read_regular"]


_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC


def open_regular(path: StrPath, *, dir_fd: int | None = None, follow_symlinks: bool = False) -> int:
    """A read-only descriptor of the regular file `path` (relative to `dir_fd` when given).

    O_NONBLOCK, so a FIFO or device at the path can never make us wait; `fstat` of the
    descriptor then decides, so a swap after any earlier check changes nothing. A symlink as
    the last component is refused (ELOOP) unless `follow_symlinks`.

    :raises NotRegularFile: a directory, FIFO, device or socket (the descriptor is closed);
        else what `open(2)` says (FileNotFoundError, PermissionError, ...).
    """
    flags = _READ if follow_symlinks else _READ | os.O_NOFOLLOW
    fd = os.open(path, flags) if dir_fd is None else os.open(path, flags, dir_fd=dir_fd)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, mode)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_fd(fd: int, *, limit: int) -> bytes:
    """At most `limit + 1` bytes from `fd` (left open): one byte over tells the caller the file
    is over its limit without reading the rest. The size sizes the first read, so a whole
    file usually costs one `read(2)`."""
    want = limit + 1
    step = min(want, max(os.fstat(fd).st_size + 1, 1 << 16))
    chunks = []
    while want > 0 and (chunk := os.read(fd, step)):
        chunks.append(chunk)
        want -= len(chunk)
        step = min(want, 1 << 20)
    return b"".join(chunks)


def read_regular(path: StrPath, *, limit: int, follow_symlinks: bool = False) -> bytes:
    """`open_regular`, then `read_fd`: at most `limit + 1` bytes of the regular file `path`."""
    fd = open_regular(path, follow_symlinks=follow_symlinks)
    try:
        return read_fd(fd, limit=limit)
    finally:
        os.close(fd)


def list_names(folder: Path, subfolders: Iterable[str], *, limit: int) -> list[str]:
    """The files under each of `subfolders` of `folder`, as '/'-separated paths relative to
    `folder`, depth first in name order, at most `limit`. Names starting with a dot are passed
    over; a symlinked folder is never entered (no loops, nothing outside). A stack, not
    recursion (Python 3.11's `os.walk` recurses): any depth is listed like any other."""
    names: list[str] = []
    stack = list(reversed(list(subfolders)))
    while stack and len(names) < limit:
        rel = stack.pop()
        try:
            with os.scandir(folder / rel) as found:
                entries = sorted((e.name, _kind(e)) for e in found if not e.name.startswith("."))
        except OSError:
            continue  # missing, not a folder, unreadable: nothing listed
        names += [f"{rel}/{name}" for name, kind in entries if kind == "file"]
        stack += [f"{rel}/{name}" for name, kind in reversed(entries) if kind == "folder"]
    return names[:limit]


def _kind(entry: os.DirEntry[str]) -> str:
    """ "folder" to enter, "link" for a symlinked folder (listed nowhere), else "file"."""
    try:
        if entry.is_dir():
            return "link" if entry.is_symlink() else "folder"
    except OSError:
        pass
    return "file"
