"""A path confined to a root given by its name: checked once (`resolve_inside`), and opened
without following a symlink swapped in after the check (`open_inside`, `open_below`).
"""

from __future__ import annotations

import errno
import os
from typing import TYPE_CHECKING

from .beneath import open_beneath, pin_folder
from .reading import open_regular
from .words import OutsideRoot

if TYPE_CHECKING:  # only named: importing pathlib costs a turn's start 3-4 ms
    from pathlib import Path

__all__ = ["open_below", "open_inside", "resolve_inside"]


_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


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
