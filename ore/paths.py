"""Where ORE keeps its files, and what to say when one of its own folders cannot be used: one
place to ask, so every module agrees on both."""

from __future__ import annotations

import errno
import os
from pathlib import Path

__all__ = ["folder_problem", "ore_home"]


def ore_home() -> Path:
    """ORE's home directory: `$ORE_HOME` when set and not empty, else `~/.ore` (`~` expanded).

    Only computes the path; nothing is created here. Callers create what they write.
    """
    return Path(os.environ.get("ORE_HOME") or "~/.ore").expanduser()


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


def folder_problem(exc: OSError, path: str | os.PathLike[str], action: str) -> str:
    """The one line for an OS error at one of ORE's own folders (its home, sessions, skills,
    history, caches): `cannot ACTION PATH: why; what to do`, say
    `folder_problem(exc, root, "read the skills folder")`. Worded here only, so a symlink loop,
    a folder without permission or a file in a folder's place reads the same wherever it is
    met; `why` is the system's own wording, as `ls` would say it."""
    why = exc.strerror or str(exc) or type(exc).__name__
    return f"cannot {action} {os.fspath(path)}: {why}; {_FIXES.get(exc.errno or 0, _OTHER)}"
