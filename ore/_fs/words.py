"""The errors ORE's disk code raises, and how an OS error is worded: one wording policy, so a
message reads the same wherever it is met. Failures are `OSError`s (a NUL in a path is a
`ValueError`, as in Python's own calls); callers word them with `os_error_words` into their own
`OreError` (`folder_problem` for ORE's own folders: the path, why, and the fix).
"""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only named: importing pathlib costs a turn's start 3-4 ms
    from pathlib import Path

__all__ = [
    "NotRegularFile",
    "OutsideRoot",
    "StrPath",
    "folder_problem",
    "not_a_folder",
    "os_error_words",
]


StrPath = str | os.PathLike[str]


_KINDS = {stat.S_IFDIR: "directory", stat.S_IFIFO: "FIFO", stat.S_IFCHR: "character device"}
_KINDS |= {stat.S_IFBLK: "block device", stat.S_IFSOCK: "socket"}


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
