"""The one confined open of ORE: a folder pinned by descriptor, and a path walked beneath it one
component at a time, so no symlink or rename, concurrent or not, leads outside it.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import NamedTuple

from .reading import open_regular
from .words import NotRegularFile, OutsideRoot

__all__ = ["Pinned", "open_beneath", "pin_folder"]


class Pinned(NamedTuple):
    """A folder held by a descriptor, the one thing a confined open starts from: a rename of
    the folder or of any parent (a parent swapped for a symlink) never changes what it names.
    `path` is where it was when pinned, for messages and absolute paths only ("" if unknown):
    nothing is ever opened by it. The caller closes `fd`."""

    fd: int
    path: str


def pin_folder(path: str | None = None) -> Pinned:
    """Pin the folder `path` (symlinks followed: the caller named it), or the process's working
    folder itself when None: `open(".")` names the cwd's inode, not the path it had.

    :raises OSError: it cannot be opened, or is not a folder (ENOTDIR).
    """
    fd = os.open("." if path is None else path, _PIN)
    try:
        name = os.getcwd() if path is None else os.path.realpath(path)
    except OSError:
        name = ""  # the working folder was removed: still pinned, only unnamed
    return Pinned(fd, name)


def open_beneath(root: Pinned, path: str) -> tuple[int, str]:
    """A read-only descriptor of the regular file `path` beneath the pinned folder `root`, and
    where it is inside it ('/'-separated, symlinks resolved): the one confined open of ORE.

    Each component is opened from its folder's descriptor with O_NOFOLLOW; a symlink met on the
    way is read and its target walked in its place (an absolute one only when it names a place
    under `root.path`); `..` goes back to the folder the walk came from, and never above
    `root`. So a symlink is followed only to inside, and no rename anywhere, concurrent or not,
    can make a byte from outside come back. A FIFO or device is refused before it is opened.

    :raises ValueError: the path contains a NUL character.
    :raises OutsideRoot: the path leads outside `root` (`..`, absolute, a symlink out).
    :raises NotRegularFile: it is a folder, FIFO, device or socket.
    :raises OSError: what `open(2)` says; ELOOP for too many symlinks, or ELOOP or ENOTDIR
        when the path changed while it was being opened.
    """
    if "\0" in path:
        raise ValueError("the path contains a NUL character")
    if path.endswith(("/", "/.")):  # `a.txt/`: a folder is asked for, as the kernel reads it
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path)
    if len(os.fsencode(path)) > _PATH_MAX:
        raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG), path)
    todo = _beneath(root, path, path)
    names: list[str] = []
    fd = os.dup(root.fd)
    links = steps = 0
    try:
        while todo:
            part = todo.pop()
            steps += 1
            if part == "..":
                if not names:
                    raise OutsideRoot(path, root.path)
                names.pop()
                steps += len(names)  # the walk again from the root, below
                if steps > _MAX_STEPS:  # `d/` a thousand times, then `..` as often: bounded
                    raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG), path)
                os.close(fd)
                fd = _walk(root.fd, names, path)
                continue
            info = _lstat_at(fd, part, path)
            if stat.S_ISLNK(info.st_mode):
                links += 1
                if links > _MAX_LINKS:
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)
                target = _readlink_at(fd, part, path)
                if target.startswith("/"):
                    names.clear()
                    os.close(fd)
                    fd = os.dup(root.fd)
                todo += _beneath(root, target, path)
                continue
            names.append(part)
            if not todo:
                if not stat.S_ISREG(info.st_mode):
                    raise NotRegularFile(path, info.st_mode)
                return _open_at(fd, part, path, folder=False), "/".join(names)
            if not stat.S_ISDIR(info.st_mode):
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path)
            folder = _open_at(fd, part, path, folder=True)
            os.close(fd)
            fd = folder
        raise NotRegularFile(path, stat.S_IFDIR)  # the path names `root` itself
    finally:
        os.close(fd)


#: The kernel's own limit on the symlinks of one path.
_MAX_LINKS = 40
#: The kernel's own limit on a path's length (Linux's PATH_MAX), in bytes.
_PATH_MAX = 4096
#: The most folders one walk opens, `..` walking again from the root included: a path within
#: PATH_MAX, its symlinks expanded, takes well under this; a crafted one is refused, not
#: walked in time growing with the square of its length.
_MAX_STEPS = 1 << 16
#: A folder held only to open what is beneath it: O_PATH where there is one (Linux), so a folder
#: we may search but not list (mode --x) can be a root or on the way, as for a path.
_PIN = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_CLOEXEC
_STEP = _PIN | os.O_NOFOLLOW


def _beneath(root: Pinned, path: str, asked: str) -> list[str]:
    """`path`'s components to walk from `root`, reversed (a stack), "" and "." dropped. An
    absolute path must name a place under `root.path`, as written or symlinks resolved; the
    walk from the descriptor, not this string check, is what keeps it inside."""
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if path.startswith("/"):
        rest = _under(root.path, parts)
        if rest is None:
            rest = _under(root.path, os.path.realpath(path).split("/")[1:])
        if rest is None:
            raise OutsideRoot(asked, root.path)
        parts = rest
    return parts[::-1]


def _under(folder: str, parts: list[str]) -> list[str] | None:
    """`parts` (of an absolute path) with `folder`'s components taken off its front, or None
    when it does not start with them."""
    if not folder.startswith("/"):
        return None
    head = [p for p in folder.split("/") if p]
    return parts[len(head) :] if parts[: len(head)] == head else None


def _walk(root_fd: int, names: list[str], path: str) -> int:
    """A descriptor of the folder `names` below `root_fd`, opened again one by one, O_NOFOLLOW:
    they were folders a moment ago, so a symlink now is a swap, refused."""
    fd = os.dup(root_fd)
    try:
        for name in names:
            folder = _open_at(fd, name, path, folder=True)
            os.close(fd)
            fd = folder
    except BaseException:
        os.close(fd)
        raise
    return fd


def _lstat_at(fd: int, name: str, path: str) -> os.stat_result:
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, path) from exc


def _readlink_at(fd: int, name: str, path: str) -> str:
    try:
        return os.readlink(name, dir_fd=fd)
    except OSError as exc:  # EINVAL: no longer a symlink
        raise OSError(errno.ELOOP, _CHANGED, path) from exc


_CHANGED = "it changed while being opened (a symlink took a folder's place)"


def _open_at(fd: int, name: str, path: str, *, folder: bool) -> int:
    """`name` in the folder `fd`, opened O_NOFOLLOW as the folder or regular file `lstat` just
    saw: ELOOP or ENOTDIR now means it was swapped meanwhile (for a symlink or a file),
    refused, never followed."""
    try:
        return os.open(name, _STEP, dir_fd=fd) if folder else open_regular(name, dir_fd=fd)
    except NotRegularFile:
        raise
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise OSError(exc.errno, _CHANGED, path) from exc
        raise OSError(exc.errno, exc.strerror, path) from exc
