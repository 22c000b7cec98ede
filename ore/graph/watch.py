"""`Watch`: which files and folders of a tree changed since the last look, from Linux inotify
(through ctypes, no dependency), so a warm graph knows in one system call that nothing did.

A write, create, delete, rename or attribute change of a file in a watched folder queues an event
in the kernel before the system call that made it returns, so a tool call that follows an edit
always sees the edit's event. Events that cannot concern the index are dropped: a file whose name
no language claims (`.po`, an editor's swap file) and a folder the walk skips (`__pycache__`,
dot-folders). A lost event (queue overflow) or a watched folder removed means "stat everything".
Where inotify is missing (not Linux) or refused (the watch limit), `Watch.start` returns None
and the caller stats the tree on every call instead.

`settled()` tells a reader waiting ahead of the calls (`serve._Ahead`) whether the files written
are whole: every file whose events say it was written is closed again (`IN_CLOSE_WRITE`) or
renamed into place (`IN_MOVED_TO`). A file emptied and then written by one writer is read once,
when its writer closes it, not half-written. A file gone (an editor may be about to put it back)
or a folder event is not whole until the events stop.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import struct
import sys
import threading
from collections.abc import Iterable

from .index.discover import SKIP_DIRS
from .index.languages import language_for

__all__ = ["Watch"]

_MODIFY, _ATTRIB, _CLOSE_WRITE = 0x2, 0x4, 0x8
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x40, 0x80, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF, _OVERFLOW, _IGNORED, _ISDIR = 0x400, 0x800, 0x4000, 0x8000, 0x40000000
_ONLYDIR, _DONT_FOLLOW = 0x01000000, 0x02000000
_MASK = (_MODIFY | _ATTRIB | _CLOSE_WRITE | _MOVED_FROM | _MOVED_TO | _CREATE | _DELETE) | (
    _DELETE_SELF | _MOVE_SELF | _ONLYDIR | _DONT_FOLLOW
)
_ALWAYS = _DELETE_SELF | _MOVE_SELF | _OVERFLOW | _IGNORED
_EVENT = struct.Struct("iIII")
_BUFFER = 1 << 16
#: inotify_init1's flags (linux/inotify.h): a watch never blocks a read, nor leaks into a child.
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_init1  # noqa: B018 - AttributeError where there is no inotify
        libc.inotify_add_watch  # noqa: B018
    except (OSError, AttributeError):
        return None
    return libc


class Watch:
    """An inotify descriptor watching folders; `touched()` drains it and names what the events
    could concern. A reader ahead of the calls drains it too (`settled`): what it read waits
    for the next `touched()`."""

    def __init__(self, fd: int, folders: dict[int, str]) -> None:
        self._fd = fd
        self._folders = folders
        self._lock = threading.Lock()  # the call's `touched` and the reader ahead's `settled`
        self._found: set[str] = set()  # drained, not yet handed out by `touched`
        self._lost = False
        self._writing: set[str] = set()  # files written (or gone) and not closed since

    @classmethod
    def start(cls, folders: Iterable[str]) -> Watch | None:
        """Watch every folder of `folders`, or None when inotify cannot (a watch refused)."""
        libc = _libc()
        if libc is None:
            return None
        fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            return None
        watched = {}
        for folder in folders:
            wd = libc.inotify_add_watch(fd, os.fsencode(folder), _MASK)
            if wd < 0:
                os.close(fd)
                return None  # the watch limit, a folder gone: the caller stats instead
            watched[wd] = folder
        return cls(fd, watched)

    def touched(self) -> set[str] | None:
        """The paths (files or folders) the events since the last call name, of those that can
        concern the index (all events are drained); None when that cannot be told (an event was
        lost, a watched folder went): the caller stats everything."""
        with self._lock:
            self._drain()
            found, lost = self._found, self._lost
            self._found, self._lost = set(), False
        return None if lost else found

    def settled(self) -> bool:
        """Whether every file the events since the last `touched()` name is whole (closed after
        its writes, or renamed into place), draining the events into the next `touched()`: a
        reader ahead of the calls reads an edit then, without waiting for a quiet moment."""
        with self._lock:
            self._drain()
            return not self._writing and not self._lost

    def _drain(self) -> None:
        while not self._lost and self._fd >= 0:
            try:
                data = os.read(self._fd, _BUFFER)
            except BlockingIOError:
                return
            except OSError:
                self._lost = True
                return
            if not data:
                return
            if not self._paths(data, self._found):
                self._lost = True

    def _paths(self, data: bytes, found: set[str]) -> bool:
        """Add the paths the events of `data` name to `found`; False for an event that says
        the watch itself can no longer be trusted."""
        at = 0
        writing = self._writing
        while at + _EVENT.size <= len(data):
            wd, mask, _cookie, length = _EVENT.unpack_from(data, at)
            raw = data[at + _EVENT.size : at + _EVENT.size + length]
            at += _EVENT.size + length
            folder = self._folders.get(wd)
            if mask & _ALWAYS or folder is None:
                return False
            name = os.fsdecode(raw.rstrip(b"\0"))
            if not name:
                found.add(folder)  # the folder itself (its attributes)
            elif mask & _ISDIR:
                if not (name.startswith(".") or name in SKIP_DIRS):
                    path = os.path.join(folder, name)
                    found.add(path)
                    writing.add(path)  # a folder came or went: whole once the events stop
            elif language_for(name) is not None or name == ".gitignore":  # both decide the index
                path = os.path.join(folder, name)
                found.add(path)
                if mask & (_CLOSE_WRITE | _MOVED_TO):
                    writing.discard(path)
                elif mask & (_MODIFY | _CREATE | _DELETE | _MOVED_FROM):
                    writing.add(path)
        return True

    def quiet(self) -> None:
        """Forget which files looked half-written (the events stopped: read them as they are)."""
        with self._lock:
            self._writing.clear()

    def fileno(self) -> int:
        """The inotify descriptor: readable once an event is queued (`serve` waits on it)."""
        return self._fd

    def close(self) -> None:
        """Stop watching. Under the lock, and never read again: the reader ahead may still hold
        this watch while a graph opened again starts a new one, which the kernel can give the
        same descriptor number (its events would be drained here, and lost)."""
        with self._lock:
            fd, self._fd = self._fd, -1
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
