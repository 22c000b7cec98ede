"""Writing: atomic (old content or new, never half), durable, and never replacing a FIFO, device
or open descriptor the user pointed us at (`/dev/null`, `/dev/stdout`, `/proc/PID/fd/N`): those
are written through. A temp file is removed only by the process that made it (tracked here, in
memory): never by a guess from a pid, which another PID namespace sharing the folder may be using.
"""

from __future__ import annotations

import atexit
import errno
import os
import stat
import threading
from contextlib import suppress

from .words import NotRegularFile, StrPath

__all__ = ["atomic_write", "durable_rename", "write_at", "write_note", "writes_through"]


_TEMP = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW
#: The temp files this process made and has not yet renamed or removed (`atomic_write`):
#: the only ones it ever removes.
_OUR_TEMPS: set[str] = set()
_TEMPS_LOCK = threading.Lock()


def atomic_write(
    path: StrPath, data: bytes, *, mode: int | None = 0o600, keep_mode: bool = False
) -> None:
    """Put `data` at `path` so that a reader sees the old content or the new, never half.

    A temp file `.NAME.PID.RANDOM.tmp` in the same folder (O_EXCL, O_NOFOLLOW) is written,
    fsynced and renamed over `path`, then the folder is fsynced (a filesystem refusing that is
    not worth failing for: the file is in place). The temp file is removed on any failure,
    KeyboardInterrupt included, and at exit if still there. Only temp files this process made
    are ever removed: one a killed writer left stays (hidden; no reader takes it for the file).

    Only a regular file or a missing path is ever replaced: a FIFO, device or socket at `path`
    (symlinks followed: `/dev/null`, `/dev/stdout`), or any `/proc/PID/fd/N` (`/dev/fd/N`), is
    written through, as the user meant; one of this process's own descriptors is written to
    directly, sharing its offset as a shell redirection does.

    :param mode: a new file's permission bits, exactly (umask ignored); None for the normal
        `0o666 & ~umask`, as `open(2)` gives them.
    :param keep_mode: an existing regular file keeps its permission bits (and, when this
        process may set them, its owner and group): `mode` is then only for a new file.
    :raises IsADirectoryError: `path` is a directory.
    :raises OSError: anything else; ENXIO for a FIFO that nobody reads.
    """
    target = os.path.abspath(os.fspath(path))
    if _write_through(target, data):
        return
    folder, name = os.path.split(target)
    stem = name[:200]  # leaves room for the suffix within NAME_MAX
    old = _existing(target) if keep_mode else None
    tmp = os.path.join(folder, f".{stem}.{os.getpid()}.{os.urandom(6).hex()}.tmp")
    fd = os.open(tmp, _TEMP, 0o666 if mode is None else 0o600)
    with _TEMPS_LOCK:
        _OUR_TEMPS.add(tmp)
    try:
        try:
            if old is not None:
                _keep_owner_and_mode(fd, old)
            elif mode is not None:
                os.fchmod(fd, mode)
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
    finally:
        with _TEMPS_LOCK:
            _OUR_TEMPS.discard(tmp)
    _sync_folder(folder)


def _existing(target: str) -> os.stat_result | None:
    """The stat of the regular file at `target` (symlinks followed), None for anything else."""
    try:
        info = os.stat(target)
    except OSError:
        return None
    return info if stat.S_ISREG(info.st_mode) else None


def _keep_owner_and_mode(fd: int, old: os.stat_result) -> None:
    """Give the temp file `old`'s owner and group when allowed (root may give any; others only
    their own), then its permission bits (after chown, which clears set-id bits)."""
    if (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
        with suppress(OSError):
            os.fchown(fd, old.st_uid, old.st_gid)
    os.fchmod(fd, stat.S_IMODE(old.st_mode) & 0o777)


@atexit.register
def _remove_our_temps() -> None:
    """At exit, the temp files this process made and never renamed (a thread cut short)."""
    with _TEMPS_LOCK:
        left = list(_OUR_TEMPS)
        _OUR_TEMPS.clear()
    for tmp in left:
        with suppress(OSError):
            os.unlink(tmp)


def durable_rename(src: StrPath, dst: StrPath) -> None:
    """`os.rename(src, dst)` made durable: the folder is fsynced after (the caller, holding the
    right locks, has checked that `dst` may be replaced)."""
    os.rename(src, dst)
    _sync_folder(os.path.dirname(os.path.abspath(dst)))


def _sync_folder(folder: str) -> None:
    # Make a rename durable; a filesystem that refuses to fsync a folder costs nothing here.
    with suppress(OSError):
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def writes_through(path: StrPath) -> bool:
    """Whether `atomic_write(path)` writes into what is there instead of replacing it: `path`
    (symlinks followed) is a FIFO, device or socket, or names a descriptor (`/proc/PID/fd/N`,
    `/dev/fd/N`, `/dev/stdout`). Then no writable folder is needed."""
    target = os.path.abspath(os.fspath(path))
    return _proc_fd(target) is not None or _mode(target) not in (0, stat.S_IFREG, stat.S_IFDIR)


def _mode(path: StrPath) -> int:
    """The file type bits of `path`; 0 when it cannot be stat'ed (missing, say): it is then
    replaced, and the rename reports any real problem."""
    try:
        return stat.S_IFMT(os.stat(path).st_mode)
    except OSError:
        return 0


def _proc_fd(target: str) -> tuple[int, int] | None:
    """(pid, N) when `target`, its symlinks followed one by one, names `/proc/PID/fd/N` (as
    `/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1` do); else None.

    Such a path must never be renamed over: the rename would replace the symlink (`/dev/stdout`
    itself, as root) or fail, and never reach what the descriptor is open on."""
    path = target
    for _ in range(40):  # the kernel's own limit on symlinks in a path
        folder, name = os.path.split(path)
        real = os.path.realpath(folder)
        parts = real.split("/")
        if name.isdigit() and parts[:2] == ["", "proc"] and parts[-1] == "fd":
            if len(parts) == 4 and parts[2].isdigit():  # /proc/PID/fd
                return int(parts[2]), int(name)
            if len(parts) == 6 and parts[2].isdigit() and parts[3] == "task":
                return int(parts[2]), int(name)  # /proc/PID/task/TID/fd: the process's
        try:
            link = os.readlink(path)
        except OSError:
            return None  # not a symlink (or gone): a name of its own
        path = os.path.normpath(os.path.join(real, link))
    return None


def _write_through(target: str, data: bytes) -> bool:
    """Write `data` into the descriptor, FIFO or device at `target`; False when it is to be
    replaced."""
    named = _proc_fd(target)
    if named is not None and named[0] == os.getpid():
        # One of our own descriptors (stdout, say): write to it, sharing its offset, as
        # `> /dev/stdout` in a shell does; opening it again would start at offset 0.
        _write_all(named[1], data)
        return True
    mode = _mode(target)
    if mode == stat.S_IFDIR:
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), target)
    if named is None and mode in (0, stat.S_IFREG):
        return False
    # O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of waiting forever; another
    # process's descriptor on a regular file is appended to, never truncated.
    flags = os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC | (os.O_APPEND if named else 0)
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        if exc.errno == errno.ENXIO and mode == stat.S_IFIFO:
            raise OSError(errno.ENXIO, "no process is reading the FIFO", target) from exc
        raise
    try:
        if named is None and stat.S_ISREG(os.fstat(fd).st_mode):
            return False  # swapped for a regular file since the stat: replace that after all
        os.set_blocking(fd, True)
        _write_all(fd, data)
    finally:
        os.close(fd)
    return True


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_at(path: StrPath, offset: int, data: bytes, *, before: bytes) -> os.stat_result:
    """Write `data` at `offset` of the regular file at `path` (never through a symlink, never
    a FIFO) and fsync: an append in place, for a caller that holds the file's lock and has
    recorded how to undo it. On any failure (a full disk) the file is cut back to `offset` and
    `before`, what was there, written back. The file's stat after."""
    fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(path, info.st_mode)
        try:
            view = memoryview(data)
            while view:
                view = view[os.pwrite(fd, view, offset + len(data) - len(view)) :]
            os.fsync(fd)
        except BaseException:
            with suppress(OSError):
                os.ftruncate(fd, offset)
                os.pwrite(fd, before, offset)
                os.fsync(fd)
            raise
        return os.fstat(fd)
    finally:
        os.close(fd)


def write_note(path: StrPath, data: bytes, *, sync: bool) -> None:
    """Make `data` the whole content of the small regular file at `path`, in place (created
    0600 if missing, never through a symlink; same inode, so a lock held on it stays held).
    Not atomic: for a note whose torn content its readers take for no note at all."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(path, info.st_mode)
        _write_all(fd, data)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
