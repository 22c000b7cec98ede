"""Disk safety in one place: every file ORE reads, resolves inside a root, or writes.

Why one module: these rules are easy to get subtly different in four places, and each difference
is a bug someone can plant a file to trigger. Here they are written, tested and hardened once:

- a read never blocks: a FIFO or device is opened O_NONBLOCK and refused after `fstat`;
- a write is atomic (old content or new, never half), and never replaces a FIFO, device or
  open descriptor the user pointed us at (`/dev/null`, `/dev/stdout`, `/proc/PID/fd/N`): those
  are written through; an existing file can keep its mode, a new one is private;
- a temp file is removed only by the process that made it (tracked here, in memory): never by
  a guess from a pid, which another PID namespace sharing the folder may be using;
- a path confined to a root is checked once (`resolve_inside`) and opened without following a
  symlink swapped in after the check (`open_inside`).

A leaf: standard library only, imports nothing from ORE, never prints. Failures are `OSError`s
(a NUL in a path is a `ValueError`, as in Python's own calls); callers word them with
`os_error_words` into their own `OreError` (`folder_problem` for ORE's own folders: the path,
why, and the fix).
"""

from __future__ import annotations

import atexit
import errno
import fcntl
import os
import stat
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # only named: importing pathlib costs a turn's start 3-4 ms
    from pathlib import Path

__all__ = [
    "NotRegularFile",
    "OutsideRoot",
    "Pinned",
    "atomic_write",
    "durable_rename",
    "exclusive_lock",
    "folder_problem",
    "list_names",
    "open_below",
    "open_beneath",
    "open_inside",
    "open_lock",
    "open_regular",
    "os_error_words",
    "pin_folder",
    "read_fd",
    "read_regular",
    "resolve_inside",
    "write_at",
    "write_note",
    "writes_through",
]

StrPath = str | os.PathLike[str]

_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_TEMP = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW
_KINDS = {stat.S_IFDIR: "directory", stat.S_IFIFO: "FIFO", stat.S_IFCHR: "character device"}
_KINDS |= {stat.S_IFBLK: "block device", stat.S_IFSOCK: "socket"}
#: The temp files this process made and has not yet renamed or removed (`atomic_write`):
#: the only ones it ever removes.
_OUR_TEMPS: set[str] = set()
_TEMPS_LOCK = threading.Lock()


class NotRegularFile(OSError):
    """What was opened is a directory, FIFO, device or socket. `strerror` is "is a directory"
    or "is not a regular file (a FIFO)"; `is_dir` and `kind` let a caller keep its own words."""

    def __init__(self, path: StrPath, mode: int) -> None:
        self.is_dir = stat.S_ISDIR(mode)
        self.kind = _KINDS.get(stat.S_IFMT(mode), "special file")
        words = "is a directory" if self.is_dir else f"is not a regular file (a {self.kind})"
        super().__init__(errno.EISDIR if self.is_dir else errno.EINVAL, words, os.fspath(path))


class OutsideRoot(OSError):
    """`resolve_inside` refused a path: resolved, symlinks followed, it lies outside `root`.
    An `OSError` (EACCES), not a `ValueError`: a caller handling the open's `OSError`s cannot
    let a refusal slip through as something else."""

    def __init__(self, path: str, root: Path | str) -> None:
        self.root = root
        super().__init__(
            errno.EACCES, f"it resolves outside {os.fspath(root) or 'the folder'}", path
        )


def os_error_words(exc: BaseException) -> str:
    """Why something failed, for a one-line message: the OS's `strerror` as the system spells it
    ("Permission denied", so messages match what `cat` says), else the exception's text, else
    its type's name. The one wording policy of ORE."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


#: What to do about an OS error at one of ORE's own folders, by errno.
_FIXES = {
    errno.ELOOP: "a symbolic link on that path points back at itself: point it at a folder or "
    "remove it",
    errno.EACCES: "give your user access to it (chmod u+rwx), or set ORE_HOME to a folder you own",
    errno.ENOTDIR: "a file stands where a folder belongs on that path: move the file away, or set "
    "ORE_HOME to another folder",
    errno.ENOSPC: "free some space, or set ORE_HOME to a folder on another disk",
    errno.EROFS: "the file system is read-only: set ORE_HOME to a writable folder",
    errno.ENAMETOOLONG: "set ORE_HOME to a shorter path",
    errno.EIO: "the disk reported an error: check it, or set ORE_HOME to a folder on another disk",
}
_FIXES[errno.EPERM] = _FIXES[errno.EACCES]
_FIXES[errno.EDQUOT] = _FIXES[errno.ENOSPC]
_OTHER = "check that it is a folder you can use, or set ORE_HOME to another one"


def not_a_folder() -> NotADirectoryError:
    """The error for a file standing where one of ORE's folders belongs, worded by the system
    (what a write there said instead, "File exists", names the wrong fix)."""
    return NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR))


def folder_problem(exc: OSError, path: str | os.PathLike[str], action: str) -> str:
    """The one line for an OS error at one of ORE's own folders (its home, sessions, skills,
    history, caches): `cannot ACTION PATH: why; what to do`, say
    `folder_problem(exc, root, "read the skills folder")`. Worded here only, so a symlink loop,
    a folder without permission or a file in a folder's place reads the same wherever it is
    met; `why` is the system's own wording, as `ls` would say it."""
    why = os_error_words(exc)
    return f"cannot {action} {os.fspath(path)}: {why}; {_FIXES.get(exc.errno or 0, _OTHER)}"


# -- reading -------------------------------------------------------------------------------------


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


# -- confinement to a root -----------------------------------------------------------------------


def resolve_inside(root: Path, path: str, *, strict: bool = True) -> Path:
    """`path` (relative to `root`, or absolute) resolved with every symlink followed, refused
    unless it lies inside `root` (resolved first). The one inside-root check of ORE.

    :param strict: False when the path need not exist (a query naming a file to come).
    :raises ValueError: the path contains a NUL character.
    :raises OutsideRoot: it resolves outside `root` (`..`, absolute elsewhere, a symlink out).
    :raises OSError: it cannot be resolved (FileNotFoundError when `strict` and missing).
    """
    if "\0" in path:
        raise ValueError("the path contains a NUL character")
    base = root.resolve()
    try:
        target = (base / path).resolve(strict=strict)
    except RuntimeError as exc:  # a symlink loop, on Pythons that do not say ELOOP
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path) from exc
    if not target.is_relative_to(base):
        raise OutsideRoot(path, base)
    return target


def open_inside(root: Path, path: str) -> int:
    """A read-only descriptor of the regular file `path` inside `root`, race-free.

    `root` is pinned once by descriptor (`pin_folder`), and `path` opened from it by
    `open_beneath`: no folder is ever opened again by its name, so neither a component nor a
    parent of `root` swapped for a symlink can lead outside.

    :raises OSError: OutsideRoot, NotRegularFile, or what `open(2)` says; ELOOP or ENOTDIR
        when the path changed while it was being opened.
    :raises ValueError: the path contains a NUL character.
    """
    folder = pin_folder(os.fspath(root))
    try:
        return open_beneath(folder, path)[0]
    finally:
        os.close(folder.fd)


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


def open_below(root: Path, path: str) -> int:
    """A read-only descriptor of the regular file `path` under `root`, never of one outside it,
    whichever way the path was listed (git's index, a walk, a cache): `open_inside` made cheap
    for the thousands of relative paths a listing gives.

    `path` is '/'-separated and relative to `root` (a resolved folder). Each folder is opened
    from `root`'s descriptor with O_NOFOLLOW, then the file with O_NOFOLLOW: when no component
    is a symlink, the file is inside `root` by construction, with no `realpath` to pay. A
    symlink anywhere on the way (ELOOP or ENOTDIR), or a path with `..`, goes to `open_inside`,
    which follows it only when it resolves inside `root`.

    :raises OutsideRoot: the path leads outside `root` (a folder swapped for a symlink out).
    :raises OSError: as `open_inside` (NotRegularFile for a FIFO or device: never waited on).
    """
    parts = path.split("/")
    if "\0" in path or any(part in ("", ".", "..") for part in parts):
        return open_inside(root, path)
    fd = os.open(root, _DIR & ~os.O_NOFOLLOW)
    try:
        for part in parts[:-1]:
            folder = os.open(part, _DIR, dir_fd=fd)
            os.close(fd)
            fd = folder
        return open_regular(parts[-1], dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            return open_inside(root, path)  # a symlink on the way: followed only to inside
        raise
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


# -- writing -------------------------------------------------------------------------------------


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
