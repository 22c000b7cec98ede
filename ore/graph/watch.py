"""`Watch`: which files and folders of a tree changed since the last look, from Linux inotify
(through ctypes, no dependency), so a warm graph knows in one system call that nothing did.

A write, create, delete, rename or attribute change of a file in a watched folder queues an event
in the kernel before the system call that made it returns, so a tool call that follows an edit
always sees the edit's event. Events that cannot concern the index are dropped: a file whose name
no language claims (`.po`, an editor's swap file) and a folder the walk skips (`__pycache__`,
dot-folders). A lost event (queue overflow) or a watched folder removed means "stat everything".
Where inotify is missing (not Linux) or refused (the watch limit), `Watch.start` returns None
and the caller stats the tree on every call instead.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import struct
import sys
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
    could concern."""

    def __init__(self, fd: int, folders: dict[int, str]) -> None:
        self._fd = fd
        self._folders = folders

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
        found: set[str] = set()
        while True:
            try:
                data = os.read(self._fd, _BUFFER)
            except BlockingIOError:
                return found
            except OSError:
                return None
            if not data:
                return found
            if not self._paths(data, found):
                return None

    def _paths(self, data: bytes, found: set[str]) -> bool:
        """Add the paths the events of `data` name to `found`; False for an event that says
        the watch itself can no longer be trusted."""
        at = 0
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
                    found.add(os.path.join(folder, name))
            elif language_for(name) is not None:
                found.add(os.path.join(folder, name))
        return True

    def fileno(self) -> int:
        """The inotify descriptor: readable once an event is queued (`serve` waits on it)."""
        return self._fd

    def queued(self) -> int:
        """How many bytes of events wait to be read (-1 when that cannot be told), without
        reading them: an edit still being written keeps adding events."""
        try:
            import fcntl
            import termios

            got = fcntl.ioctl(self._fd, termios.FIONREAD, b"\0\0\0\0")
        except (ImportError, OSError):
            return -1
        return int.from_bytes(got, sys.byteorder, signed=True)

    def close(self) -> None:
        """Stop watching."""
        with contextlib.suppress(OSError):
            os.close(self._fd)
